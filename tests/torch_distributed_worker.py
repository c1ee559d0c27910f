"""One process of the torch distributed tests (started by tests/torch/test_distributed.py with torchrun's variables).

``python torch_distributed_worker.py learn OUT``: one PPO update on this rank's half of a hand-made rollout, a
RunningStandardScaler fed this rank's half of a hand-made batch, then short PPO (CartPole) and SAC (Pendulum) runs
that write TensorBoard data and checkpoints; writes what they learned (the parameters after every update of the runs)
to ``OUT/rank<r>.pt``. (One pair of processes for all: starting them costs more than the work.)
``python torch_distributed_worker.py raise OUT``: a PPO run in which rank 1 raises at its second update.
"""

import faulthandler
import os
import sys

import gymnasium
import numpy as np
import torch
import torch.nn as nn

from skrl_like import config
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

QUIET = {"headless": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)
ROLLOUTS, ALL_ENVS = 8, 4


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 16), nn.Tanh(), nn.Linear(16, self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 16), nn.Tanh(), nn.Linear(16, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class GaussianPolicy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 16), nn.ReLU(), nn.Linear(16, self.num_actions))
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), self.log_std_parameter, {}


class Critic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations + self.num_actions, 16), nn.ReLU(), nn.Linear(16, 1))

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], -1)), {}


def hand_made_rollout() -> dict:
    """A rollout of ``ROLLOUTS`` steps of ``ALL_ENVS`` environments, ``(rollouts, envs, size)`` each."""
    rng = np.random.default_rng(0)
    return {
        "states": rng.normal(size=(ROLLOUTS, ALL_ENVS, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, size=(ROLLOUTS, ALL_ENVS, 1)).astype(np.float32),
        "rewards": rng.normal(size=(ROLLOUTS, ALL_ENVS, 1)).astype(np.float32),
        "next_states": rng.normal(size=(ROLLOUTS, ALL_ENVS, 4)).astype(np.float32),
        "terminated": rng.random((ROLLOUTS, ALL_ENVS, 1)) < 0.1,
        "truncated": rng.random((ROLLOUTS, ALL_ENVS, 1)) < 0.1,
    }


def hand_made_scaler_rows() -> np.ndarray:
    return np.random.default_rng(1).normal(3.0, 2.0, size=(10, 3)).astype(np.float32)


def ppo_update(envs: slice) -> dict:
    """One PPO update (2 epochs of 2 mini-batches, state and value scalers, KL-adaptive learning rate) on the
    rollout's environments ``envs``; returns the parameters, statistics and learning rate after it."""
    torch.manual_seed(0)  # the same initial parameters as rank 0's broadcast ones
    num_envs = len(range(ALL_ENVS)[envs])
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": ROLLOUTS,
        "learning_epochs": 2,
        "mini_batches": 2,
        "learning_rate": 1e-2,
        "learning_rate_scheduler": KLAdaptiveLR,
        "learning_rate_scheduler_kwargs": {"kl_threshold": 1e-4},
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": OBSERVATIONS},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1},
        "entropy_loss_scale": 0.01,
        "time_limit_bootstrap": True,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    models = {"policy": Policy(OBSERVATIONS, ACTIONS), "value": Value(OBSERVATIONS, ACTIONS)}
    memory = RandomMemory(memory_size=ROLLOUTS, num_envs=num_envs, device="cpu")
    agent = PPO(models, memory, OBSERVATIONS, ACTIONS, "cpu", cfg)
    agent.keeps_acting_pass = False  # the rollout is written by hand, with no acting pass: the update evaluates it
    agent.init()
    rollout = hand_made_rollout()
    for step in range(ROLLOUTS):
        memory.add_samples(**{name: torch.as_tensor(values[step, envs]) for name, values in rollout.items()})
    agent.set_mode("train")
    agent._update(ROLLOUTS, 100)
    return {
        "policy": {name: value.clone() for name, value in models["policy"].state_dict().items()},
        "value": {name: value.clone() for name, value in models["value"].state_dict().items()},
        "state_preprocessor": agent._state_preprocessor.state_dict(),
        "value_preprocessor": agent._value_preprocessor.state_dict(),
        "learning_rate": agent.scheduler.get_last_lr()[0],
    }


def scaler_statistics(rows: np.ndarray) -> dict:
    scaler = RunningStandardScaler(3)
    scaler(torch.as_tensor(rows), train=True)
    return {name: value.clone() for name, value in scaler.state_dict().items()}


def flat_parameters(agent) -> torch.Tensor:
    models = {id(model): model for model in agent.models.values() if model is not None}.values()
    tensors = [parameter.detach().reshape(-1) for model in models for parameter in model.parameters()]
    if hasattr(agent, "log_entropy_coefficient"):
        tensors.append(agent.log_entropy_coefficient.detach().reshape(-1))
    return torch.cat(tensors).clone()


def record_updates(agent, snapshots: list) -> None:
    """After every update of ``agent``, append its flattened parameters to ``snapshots``."""
    update = agent._update

    def recorded(timestep, timesteps):
        update(timestep, timesteps)
        snapshots.append(flat_parameters(agent))

    agent._update = recorded


def ppo_cartpole(experiment: dict):
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 8, "mini_batches": 2, "learning_epochs": 2, "experiment": experiment}
    models = {
        "policy": Policy(env.observation_space, env.action_space),
        "value": Value(env.observation_space, env.action_space),
    }
    memory = RandomMemory(memory_size=8, num_envs=env.num_envs, device="cpu")
    return env, PPO(models, memory, env.observation_space, env.action_space, "cpu", cfg)


def sac_pendulum(experiment: dict):
    env = wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)
    cfg = {**SAC_DEFAULT_CONFIG, "batch_size": 8, "learning_starts": 8, "experiment": experiment}
    cfg["learn_entropy"] = True
    models = {
        "policy": GaussianPolicy(env.observation_space, env.action_space),
        **{role: Critic(env.observation_space, env.action_space) for role in ("critic_1", "critic_2")},
        **{role: Critic(env.observation_space, env.action_space) for role in ("target_critic_1", "target_critic_2")},
    }
    memory = RandomMemory(memory_size=64, num_envs=1, device="cpu")
    return env, SAC(models, memory, env.observation_space, env.action_space, "cpu", cfg)


def main() -> None:
    faulthandler.dump_traceback_later(240, exit=True)  # a process that hangs shows where, and ends
    scenario, out = sys.argv[1], sys.argv[2]
    rank, world_size = config.torch.rank, config.torch.world_size
    assert config.torch.is_distributed and torch.distributed.is_initialized()
    if scenario == "learn":
        envs = slice(rank * ALL_ENVS // world_size, (rank + 1) * ALL_ENVS // world_size)
        rows = hand_made_scaler_rows()
        rows = rows[rank * len(rows) // world_size : (rank + 1) * len(rows) // world_size]
        result = {"update": ppo_update(envs), "scaler": scaler_statistics(rows)}
        set_seed(7)
        for name, build, timesteps in (("ppo", ppo_cartpole, 32), ("sac", sac_pendulum, 20)):
            env, agent = build({"write_interval": 4, "checkpoint_interval": 16, "experiment_name": name})
            snapshots = []
            record_updates(agent, snapshots)
            SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
            result[name] = torch.stack(snapshots)
    elif scenario == "raise":
        env, agent = ppo_cartpole({"write_interval": 0, "checkpoint_interval": 0})
        update = agent._update
        calls = []

        def failing(timestep, timesteps):
            calls.append(timestep)
            if rank == 1 and len(calls) == 2:
                raise RuntimeError("rank 1 fails on purpose at its second update")
            update(timestep, timesteps)

        agent._update = failing
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 100_000, **QUIET}).train()
        return
    torch.save(result, os.path.join(out, f"rank{rank}.pt"))


if __name__ == "__main__":
    main()
