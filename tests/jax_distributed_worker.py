"""One process of the JAX distributed tests (started by tests/jax/test_distributed.py, through the launcher
``python -m skrl_like.jax.utils.distributed`` or with its variables).

``python jax_distributed_worker.py learn OUT``: one PPO update on this rank's half of a hand-made rollout, a
RunningStandardScaler's functional update and a host-side one fed this rank's half of a hand-made batch, then a short
PPO (CartPole) run that writes TensorBoard data and checkpoints under ``OUT/rank<r>``; writes what they learned (the
parameters after every update of the run, the update's compilations) to ``OUT/rank<r>.npz``.
``python jax_distributed_worker.py raise OUT``: a PPO run in which rank 1 raises at its second update.
"""

import contextlib
import faulthandler
import os
import sys

import flax.linen as nn
import gymnasium
import jax
import numpy as np
from jax.flatten_util import ravel_pytree

from skrl_like import config
from skrl_like.jax.agents.mechanics import FunctionalPreprocessor
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.resources.schedulers import KLAdaptiveLR
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.jax.utils.distributed import compile_update
from skrl_like.utils import set_seed

QUIET = {"headless": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)
ROLLOUTS, ALL_ENVS = 8, 4


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(nn.tanh(nn.Dense(16)(inputs["states"]))), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(1)(nn.tanh(nn.Dense(16)(inputs["states"]))), {}


def hand_made_rollout() -> dict:
    """A rollout of ``ROLLOUTS`` steps of ``ALL_ENVS`` environments, ``(rollouts, envs, size)`` each."""
    rng = np.random.default_rng(0)
    return {
        "states": rng.normal(size=(ROLLOUTS, ALL_ENVS, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, size=(ROLLOUTS, ALL_ENVS, 1)).astype(np.float32),
        "rewards": rng.normal(size=(ROLLOUTS, ALL_ENVS, 1)).astype(np.float32),
        "next_states": rng.normal(size=(ROLLOUTS, ALL_ENVS, 4)).astype(np.float32),
        "terminated": (rng.random((ROLLOUTS, ALL_ENVS, 1)) < 0.1).astype(np.int8),
        "truncated": (rng.random((ROLLOUTS, ALL_ENVS, 1)) < 0.1).astype(np.int8),
    }


def hand_made_scaler_rows() -> np.ndarray:
    return np.random.default_rng(1).normal(3.0, 2.0, size=(10, 3)).astype(np.float32)


def build(models: dict) -> dict:
    config.jax.key = 0  # the same initial parameters as rank 0's broadcast ones
    for role, model in models.items():
        model.init_state_dict(role)
    return models


def ppo_update(envs: slice) -> dict:
    """One PPO update (2 epochs of 2 mini-batches, state and value scalers, KL-adaptive learning rate, KL early stop
    armed) on the rollout's environments ``envs``; returns the parameters, statistics and learning rate after it (flat
    arrays)."""
    num_envs = len(range(ALL_ENVS)[envs])
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": ROLLOUTS,
        "learning_epochs": 2,
        "mini_batches": 2,
        "learning_rate": 1e-2,
        "learning_rate_scheduler": KLAdaptiveLR,
        "learning_rate_scheduler_kwargs": {"kl_threshold": 1e-4},
        "kl_threshold": 1.0,  # never reached: the gradients and the KL travel in one all-reduce (the stop path)
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": OBSERVATIONS},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1},
        "entropy_loss_scale": 0.01,
        "time_limit_bootstrap": True,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    models = build({"policy": Policy(OBSERVATIONS, ACTIONS), "value": Value(OBSERVATIONS, ACTIONS)})
    memory = RandomMemory(memory_size=ROLLOUTS, num_envs=num_envs)
    agent = PPO(models, memory, OBSERVATIONS, ACTIONS, None, cfg)
    agent.init()
    rollout = hand_made_rollout()
    for step in range(ROLLOUTS):
        memory.add_samples(**{name: values[step, envs] for name, values in rollout.items()})
    agent.set_mode("train")
    agent._update(ROLLOUTS, 100)
    result = {
        "policy": ravel_pytree(models["policy"].state_dict.params)[0],
        "value": ravel_pytree(models["value"].state_dict.params)[0],
        "learning_rate": agent._learning_rate,
    }
    for name in ("state_preprocessor", "value_preprocessor"):
        for key, value in agent.checkpoint_modules[name].state_dict.params.items():
            result[f"{name}/{key}"] = value
    return {key: np.asarray(value) for key, value in result.items()}


def scaler_statistics(rows: np.ndarray) -> dict:
    """The statistics after one update with ``rows``: the functional form (inside a compiled function) and the
    host-side scaler (NumPy backend)."""
    functional = FunctionalPreprocessor(RunningStandardScaler(3))
    update = compile_update(lambda state, x: functional(state, x, train=True)[0])
    mean, variance, count = update(functional.state, rows)
    host = RunningStandardScaler(3)
    host(rows, train=True)
    return {
        "functional/running_mean": mean,
        "functional/running_variance": variance,
        "functional/current_count": count,
        "host/running_mean": host.running_mean,
        "host/running_variance": host.running_variance,
        "host/current_count": host.current_count,
    }


def flat_parameters(agent) -> np.ndarray:
    models = {id(model): model for model in agent.models.values() if model is not None}.values()
    return np.asarray(ravel_pytree([model.state_dict.params for model in models])[0])


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
    models = build(
        {
            "policy": Policy(env.observation_space, env.action_space),
            "value": Value(env.observation_space, env.action_space),
        }
    )
    memory = RandomMemory(memory_size=8, num_envs=env.num_envs)
    return env, PPO(models, memory, env.observation_space, env.action_space, None, cfg)


@contextlib.contextmanager
def counted_all_reduces():
    """The ``lax.pmean`` calls while tracing (the all-reduces in the compiled programs: a scan's body is traced once,
    so a collective of every mini-batch step counts once)."""
    calls, pmean = [], jax.lax.pmean

    def counting(*args, **kwargs):
        calls.append(args)
        return pmean(*args, **kwargs)

    jax.lax.pmean = counting
    try:
        yield calls
    finally:
        jax.lax.pmean = pmean


def main() -> None:
    faulthandler.dump_traceback_later(240, exit=True)  # a process that hangs shows where, and ends
    scenario, out = sys.argv[1], sys.argv[2]
    rank, world_size = config.jax.rank, config.jax.world_size
    assert config.jax.is_distributed and jax.process_count() == world_size == 2
    if scenario == "learn":
        envs = slice(rank * ALL_ENVS // world_size, (rank + 1) * ALL_ENVS // world_size)
        rows = hand_made_scaler_rows()
        rows = rows[rank * len(rows) // world_size : (rank + 1) * len(rows) // world_size]
        result = {f"update/{key}": value for key, value in ppo_update(envs).items()}
        result.update({f"scaler/{key}": np.asarray(value) for key, value in scaler_statistics(rows).items()})
        set_seed(7)
        directory = os.path.join(out, f"rank{rank}", "runs")
        # (the off-policy agents' updates go through the same compile_update and Optimizer.update or apply; a SAC run here
        # would cost one more compilation per process)
        for name, make, timesteps in (("ppo", ppo_cartpole, 32),):
            experiment = {
                "write_interval": 4,
                "checkpoint_interval": 16,
                "directory": directory,
                "experiment_name": name,
            }
            env, agent = make(experiment)
            snapshots = []
            record_updates(agent, snapshots)
            with counted_all_reduces() as all_reduces:
                SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
            result[name] = np.stack(snapshots)
            result[f"{name}/compilations"] = np.asarray(agent._update_fn._cache_size())
            result[f"{name}/all_reduces"] = np.asarray(len(all_reduces))
        np.savez(os.path.join(out, f"rank{rank}.npz"), **result)
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


if __name__ == "__main__":
    main()
