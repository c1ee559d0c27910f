"""Train DDPG, TD3 and SAC at once on Pendulum-v1, each agent in its own process (ParallelTrainer).

One vectorised Pendulum-v1 with one sub-environment per agent; each agent has its own (unshared) replay memory and
learns from its own sub-environment only. Afterwards each agent is evaluated for a few episodes with exploration off
(the main process's agents hold the weights trained in the agent processes).

The set-up follows skrl 1.4.3's parallel Pendulum example (DDPG, TD3 and SAC, unshared memories, [400, 300] ReLU
networks, batch 100, 100 random warm-up steps, 15k steps); ``--trainer sequential`` runs the same work with the
SequentialTrainer, to compare wall times.
Run: python examples/torch/parallel_pendulum.py [--timesteps 15000] [--trainer parallel|sequential] [--hidden 400 300]
"""

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
from skrl_like.torch.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.resources.noises import GaussianNoise, OrnsteinUhlenbeckNoise
from skrl_like.torch.trainers import ParallelTrainer, SequentialTrainer
from skrl_like.utils import set_seed

MEMORY_SIZE = 15_000
SHARED_CFG = {"batch_size": 100, "random_timesteps": 100, "learning_starts": 100}


def mlp(inputs, outputs, hidden):
    layers, size = [], inputs
    for width in hidden:
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, outputs))


# the model classes live at module level: each agent is pickled, by class name, into its process
class DeterministicActor(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self, clip_actions=False)
        self.net = mlp(self.num_observations, self.num_actions, hidden)

    def compute(self, inputs, role):
        return 2 * torch.tanh(self.net(inputs["states"])), {}  # Pendulum-v1's torque is in [-2, 2]


class StochasticActor(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = mlp(self.num_observations, self.num_actions, hidden)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return 2 * torch.tanh(self.net(inputs["states"])), self.log_std_parameter, {}


class Critic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations + self.num_actions, 1, hidden)

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=-1)), {}


def make_agents(env, hidden, directory):
    """DDPG, TD3 and SAC for one sub-environment each, with their own memories."""
    spaces = (env.observation_space, env.action_space, env.device, hidden)
    experiment = {"directory": directory, "write_interval": "auto", "checkpoint_interval": 0}

    def memory():
        return RandomMemory(memory_size=MEMORY_SIZE, num_envs=1, device=env.device)

    def critics(*roles):
        return {role: Critic(*spaces) for role in roles}

    ddpg_cfg = {**DDPG_DEFAULT_CONFIG, **SHARED_CFG, "experiment": {**experiment, "experiment_name": "ddpg"}}
    ddpg_cfg["exploration"] = {
        **DDPG_DEFAULT_CONFIG["exploration"],
        "noise": OrnsteinUhlenbeckNoise(theta=0.15, sigma=0.1, base_scale=1.0, device=env.device),
    }
    ddpg = DDPG(
        models={"policy": DeterministicActor(*spaces), "target_policy": DeterministicActor(*spaces),
                **critics("critic", "target_critic")},
        memory=memory(), cfg=ddpg_cfg, observation_space=env.observation_space, action_space=env.action_space,
        device=env.device,
    )  # fmt: skip

    td3_cfg = {**TD3_DEFAULT_CONFIG, **SHARED_CFG, "experiment": {**experiment, "experiment_name": "td3"}}
    td3_cfg["exploration"] = {**TD3_DEFAULT_CONFIG["exploration"], "noise": GaussianNoise(0, 0.1, device=env.device)}
    td3_cfg["smooth_regularization_noise"] = GaussianNoise(0, 0.2, device=env.device)
    td3_cfg["smooth_regularization_clip"] = 0.5
    td3 = TD3(
        models={"policy": DeterministicActor(*spaces), "target_policy": DeterministicActor(*spaces),
                **critics("critic_1", "critic_2", "target_critic_1", "target_critic_2")},
        memory=memory(), cfg=td3_cfg, observation_space=env.observation_space, action_space=env.action_space,
        device=env.device,
    )  # fmt: skip

    sac_cfg = {**SAC_DEFAULT_CONFIG, **SHARED_CFG, "learn_entropy": True}
    sac_cfg["experiment"] = {**experiment, "experiment_name": "sac"}
    sac = SAC(
        models={"policy": StochasticActor(*spaces),
                **critics("critic_1", "critic_2", "target_critic_1", "target_critic_2")},
        memory=memory(), cfg=sac_cfg, observation_space=env.observation_space, action_space=env.action_space,
        device=env.device,
    )  # fmt: skip
    return [ddpg, td3, sac]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=15_000, help="environment steps (each agent's)")
    parser.add_argument("--trainer", choices=["parallel", "sequential"], default="parallel")
    parser.add_argument("--agents", type=int, choices=[1, 2, 3], default=3, help="the first N of DDPG, TD3, SAC")
    parser.add_argument("--hidden", type=int, nargs="+", default=[400, 300], help="hidden layer widths")
    parser.add_argument("--episodes", type=int, default=5, help="evaluation episodes per agent (0: none)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--directory", default="runs/torch/pendulum_parallel")
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = wrap_env(gym.make_vec("Pendulum-v1", num_envs=args.agents, vectorization_mode="sync"))
    agents = make_agents(env, tuple(args.hidden), args.directory)[: args.agents]
    trainer_class = ParallelTrainer if args.trainer == "parallel" else SequentialTrainer
    cfg = {"timesteps": args.timesteps, "headless": True, "disable_progressbar": True}
    trainer = trainer_class(env=env, agents=agents, agents_scope=[1] * args.agents, cfg=cfg)
    start = time.perf_counter()
    trainer.train()
    print(
        f"{args.trainer} trainer, {args.agents} agent(s), {args.timesteps} steps: {time.perf_counter() - start:.1f} s"
    )

    for agent in agents if args.episodes > 0 else []:
        eval_env = wrap_env(gym.make("Pendulum-v1"))
        evaluator = SequentialTrainer(env=eval_env, agents=agent, cfg={"timesteps": 1, "headless": True})
        returns = evaluator.evaluate_episodes(num_episodes=args.episodes)
        print(f"{type(agent).__name__}: mean return {np.mean(returns):.1f} +- {np.std(returns):.1f} (exploration off)")


if __name__ == "__main__":  # required: the agent processes are spawned, and they import this module
    main()
