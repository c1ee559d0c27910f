"""Train TD3 on Pendulum-v1 with SequentialTrainer, then evaluate with exploration off (the noiseless policy).

Hyperparameters (written once, in TD3_CFG and the noise constants below): the off-policy benchmark's ([256, 256]
ReLU networks, batch 256, one gradient step per env step, 1000 random warm-up steps) and the paper's noises
(Gaussian exploration noise, std 0.1, decayed over the run; target smoothing noise std 0.2 clipped to 0.5).
Run: python examples/torch/td3_pendulum.py [--timesteps 20000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.resources.noises import GaussianNoise
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

HIDDEN = (256, 256)
MEMORY_SIZE = 20_000
EXPLORATION_STD = 0.1  # GaussianNoise(0, EXPLORATION_STD), scaled from 1.0 to 1e-3 over the run
SMOOTHING_STD = 0.2  # GaussianNoise(0, SMOOTHING_STD) on the target policy's actions, clipped to 0.5
TD3_CFG = {
    "gradient_steps": 1,
    "batch_size": 256,
    "discount_factor": 0.99,
    "polyak": 0.005,
    "actor_learning_rate": 1e-3,
    "critic_learning_rate": 1e-3,
    "random_timesteps": 1000,
    "learning_starts": 1000,
    "policy_delay": 2,
    "smooth_regularization_clip": 0.5,
}


def mlp(inputs, outputs, hidden=HIDDEN):
    layers, size = [], inputs
    for width in hidden:
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, outputs))


class Actor(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self, clip_actions=False)
        self.net = mlp(self.num_observations, self.num_actions, hidden)

    def compute(self, inputs, role):
        # Pendulum-v1's torque is in [-2, 2]
        return 2 * torch.tanh(self.net(inputs["states"])), {}


class Critic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations + self.num_actions, 1, hidden)

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=-1)), {}


def make_agent(env, experiment=None, hidden=HIDDEN, memory_size=MEMORY_SIZE, **cfg):
    """A TD3 agent for ``env``; keyword arguments override entries of ``TD3_CFG``."""
    cfg = {
        **TD3_DEFAULT_CONFIG,
        **TD3_CFG,
        "exploration": {
            "noise": GaussianNoise(0, EXPLORATION_STD, device=env.device),
            "initial_scale": 1.0,
            "final_scale": 1e-3,
            "timesteps": None,
        },
        "smooth_regularization_noise": GaussianNoise(0, SMOOTHING_STD, device=env.device),
        **cfg,
        "experiment": experiment or {"directory": "runs/torch/pendulum"},
    }
    models = {
        role: Actor(env.observation_space, env.action_space, env.device, hidden) for role in ("policy", "target_policy")
    }
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(env.observation_space, env.action_space, env.device, hidden)
    memory = RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device)
    return TD3(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=20_000, help="environment steps")
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
