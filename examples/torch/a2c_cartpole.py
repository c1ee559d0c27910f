"""Train A2C on CartPole-v1 (8 sync vector envs) with SequentialTrainer, then evaluate with exploration off.

Run: python examples/torch/a2c_cartpole.py [--timesteps 200000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small MLPs run fastest on one intra-op thread

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


def mlp(in_features, out_features, head_gain):
    """64x64 tanh MLP, orthogonal weights (hidden gain sqrt(2), a small policy head), zero biases."""
    layers = [nn.Linear(in_features, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out_features)]
    for index, layer in enumerate(layer for layer in layers if isinstance(layer, nn.Linear)):
        nn.init.orthogonal_(layer.weight, gain=head_gain if index == 2 else np.sqrt(2))
        nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = mlp(self.num_observations, self.num_actions, head_gain=0.01)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations, 1, head_gain=1.0)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, rollouts=8, experiment=None):
    """A2C with the hyperparameters this repository benchmarks (docs/agents/a2c.md)."""
    cfg = {
        **A2C_DEFAULT_CONFIG,
        "rollouts": rollouts,
        "mini_batches": 1,
        "discount_factor": 0.99,
        "lambda": 0.95,
        "learning_rate": 7e-4,
        "grad_norm_clip": 0.5,
        "entropy_loss_scale": 0.0,
        "experiment": experiment
        or {"directory": "runs/torch/cartpole_a2c", "write_interval": "auto", "checkpoint_interval": "auto"},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return A2C(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=200_000, help="environment steps in total (all envs)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = wrap_env(gym.make_vec("CartPole-v1", num_envs=args.num_envs, vectorization_mode="sync"))
    env._env.reset(seed=args.seed)  # the wrapper never seeds the env (skrl behaviour): seed it once here
    agent = make_agent(env)
    trainer = SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": args.timesteps // args.num_envs, "headless": True}
    )
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(
        f"Final evaluation (20 episodes, exploration off): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}"
    )


if __name__ == "__main__":
    main()
