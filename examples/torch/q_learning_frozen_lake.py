"""Train tabular Q-learning on FrozenLake-v1 (not slippery) with SequentialTrainer, then play the greedy policy.

The policy is skrl's epsilon-greedy tabular model (a Q-table of ones, epsilon 0.1: the optimistic start makes the
greedy choice explore); the agent keeps Q_LEARNING_DEFAULT_CONFIG's learning rate 0.5 and uses skrl's example
discount 0.999 (skrl's example also sets cfg["alpha"] = 0.4, a key its agent never reads). Issue 12's bar: the
greedy policy reaches the goal in every episode (success rate 1.0). About 2 s on one core.
Run: python examples/torch/q_learning_frozen_lake.py [--timesteps 20000] [--seed 42] [--num-envs 1]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch

from skrl_like.torch.agents.q_learning import Q_LEARNING, Q_LEARNING_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.models import Model, TabularMixin
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

EPSILON = 0.1
TIMESTEPS = 20_000  # skrl's example runs 80k; the table is greedy-optimal well before 20k
Q_LEARNING_CFG = {"discount_factor": 0.999}


class EpsilonGreedyPolicy(TabularMixin, Model):
    """Greedy over this environment's Q-table, with a uniformly random action with probability ``epsilon``."""

    def __init__(self, observation_space, action_space, device, num_envs=1, epsilon=EPSILON):
        Model.__init__(self, observation_space, action_space, device)
        TabularMixin.__init__(self, num_envs)
        self.epsilon = epsilon
        self.q_table = torch.ones((num_envs, self.num_observations, self.num_actions), device=self.device)
        self._env_ids = torch.arange(num_envs, device=self.device).view(-1, 1)

    def compute(self, inputs, role):
        states = inputs["states"].long().view(-1, 1)
        actions = torch.argmax(self.q_table[self._env_ids, states], dim=-1)
        explore = torch.rand(actions.shape, device=self.device) < self.epsilon
        random_actions = torch.randint(self.num_actions, actions.shape, device=self.device)
        return torch.where(explore, random_actions, actions), {}


def make_env(num_envs=1):
    if num_envs == 1:
        return wrap_env(gym.make("FrozenLake-v1", is_slippery=False), verbose=False)
    return wrap_env(gym.make_vec("FrozenLake-v1", num_envs=num_envs, is_slippery=False), verbose=False)


def make_agent(env, experiment=None, epsilon=EPSILON, **cfg):
    """A Q-learning agent for ``env``; keyword arguments override entries of ``Q_LEARNING_CFG``."""
    cfg = {**Q_LEARNING_DEFAULT_CONFIG, **Q_LEARNING_CFG, **cfg}
    cfg["experiment"] = experiment or {"directory": "runs/torch/frozen_lake"}
    policy = EpsilonGreedyPolicy(env.observation_space, env.action_space, env.device, env.num_envs, epsilon)
    return Q_LEARNING(
        models={"policy": policy},
        memory=None,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def greedy_success_rate(trainer, num_episodes=20):
    """The share of greedy episodes that reach the goal (FrozenLake pays 1 there and 0 everywhere else)."""
    return float(np.mean(trainer.evaluate_episodes(num_episodes=num_episodes, max_timesteps=10_000)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=TIMESTEPS, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--num-envs", type=int, default=1, help="environments (one Q-table each)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env(args.num_envs)
    agent = make_agent(env)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    print(f"Greedy success rate (20 episodes): {greedy_success_rate(trainer):.2f}")


if __name__ == "__main__":
    main()
