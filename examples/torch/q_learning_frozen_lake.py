"""Train tabular Q-learning (or SARSA: --agent sarsa) on FrozenLake-v1 (not slippery) with SequentialTrainer, then
play the greedy policy.

The policy is skrl's epsilon-greedy tabular model (a Q-table of ones: the optimistic start makes the greedy choice
explore); the agents keep their default learning rate 0.5. Q-learning uses skrl's example settings (epsilon 0.1,
discount 0.999; skrl's example also sets cfg["alpha"] = 0.4, a key its agent never reads). SARSA learns the values of
its epsilon-greedy behaviour, so near the holes a step that bumps into a wall can look better than one that moves on:
with discount 0.999 or epsilon 0.1 its greedy policy often never reaches the goal; it uses discount 0.9 and epsilon
0.2 (docs/agents/tabular.md). Issue 12's bar: the greedy policy reaches the goal in every episode (success rate 1.0).
About 2 s on one core.
Run: python examples/torch/q_learning_frozen_lake.py [--agent q_learning|sarsa] [--timesteps 20000] [--seed 42]
     [--num-envs 1]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch

from skrl_like.torch.agents.q_learning import Q_LEARNING, Q_LEARNING_DEFAULT_CONFIG
from skrl_like.torch.agents.sarsa import SARSA, SARSA_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.models import Model, TabularMixin
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

EPSILON = 0.1
TIMESTEPS = 20_000  # skrl's example runs 80k; the table is greedy-optimal well before 20k
Q_LEARNING_CFG = {"discount_factor": 0.999}
# agent name -> (class, default config, this example's config, the policy's epsilon)
AGENTS = {
    "q_learning": (Q_LEARNING, Q_LEARNING_DEFAULT_CONFIG, Q_LEARNING_CFG, EPSILON),
    "sarsa": (SARSA, SARSA_DEFAULT_CONFIG, {"discount_factor": 0.9}, 0.2),
}


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


def make_agent(env, experiment=None, epsilon=None, agent="q_learning", **cfg):
    """A Q-learning (or SARSA) agent for ``env`` with its :data:`AGENTS` settings; keyword arguments override them."""
    agent_class, defaults, example_cfg, example_epsilon = AGENTS[agent]
    cfg = {**defaults, **example_cfg, **cfg}
    cfg["experiment"] = experiment or {"directory": "runs/torch/frozen_lake"}
    epsilon = example_epsilon if epsilon is None else epsilon
    policy = EpsilonGreedyPolicy(env.observation_space, env.action_space, env.device, env.num_envs, epsilon)
    return agent_class(
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
    parser.add_argument("--agent", choices=sorted(AGENTS), default="q_learning")
    parser.add_argument("--timesteps", type=int, default=TIMESTEPS, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--num-envs", type=int, default=1, help="environments (one Q-table each)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env(args.num_envs)
    agent = make_agent(env, agent=args.agent)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    print(f"Greedy success rate (20 episodes): {greedy_success_rate(trainer):.2f}")


if __name__ == "__main__":
    main()
