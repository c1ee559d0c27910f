"""Train SAC on Pendulum-v1 with SequentialTrainer, then evaluate with exploration off (the policy's mean action).

The hyperparameters (written once, in SAC_CFG, HIDDEN, MEMORY_SIZE and TIMESTEPS below) are skrl's own Pendulum SAC
example's, so the figures in docs/benchmarks.md compare like with like (issue 11's bar: >= -200 within 20k steps).
Run: python examples/torch/sac_pendulum.py [--timesteps 15000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

# skrl's own Pendulum SAC example (torch_gymnasium_pendulum_sac.py): [400, 300] ReLU networks, a 20k replay memory
# sampled without replacement, 15k steps; the keys not set here keep SAC_DEFAULT_CONFIG's values (learning rates 1e-3,
# alpha from 0.2 with its learning rate 1e-3, polyak 0.005)
HIDDEN = (400, 300)
MEMORY_SIZE = 20_000
TIMESTEPS = 15_000
SAC_CFG = {
    "discount_factor": 0.98,
    "batch_size": 100,
    "random_timesteps": 0,
    "learning_starts": 1000,
    "learn_entropy": True,
}


def mlp(inputs, outputs, hidden=HIDDEN):
    layers, size = [], inputs
    for width in hidden:
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, outputs))


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = mlp(self.num_observations, self.num_actions, hidden)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        # Pendulum-v1's torque is in [-2, 2]
        return 2 * torch.tanh(self.net(inputs["states"])), self.log_std_parameter, {}


class Critic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations + self.num_actions, 1, hidden)

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=-1)), {}


def make_agent(env, experiment=None, hidden=HIDDEN, memory_size=MEMORY_SIZE, **cfg):
    """A SAC agent for ``env``; keyword arguments override entries of ``SAC_CFG``."""
    cfg = {**SAC_DEFAULT_CONFIG, **SAC_CFG, **cfg, "experiment": experiment or {"directory": "runs/torch/pendulum"}}
    models = {"policy": Policy(env.observation_space, env.action_space, env.device, hidden)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(env.observation_space, env.action_space, env.device, hidden)
    memory = RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device, replacement=False)
    return SAC(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=TIMESTEPS, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = wrap_env(gym.make("Pendulum-v1"))
    agent = make_agent(env)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(
        f"Final evaluation (20 episodes, exploration off): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}"
    )


if __name__ == "__main__":
    main()
