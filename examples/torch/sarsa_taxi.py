"""Train tabular SARSA on Taxi with SequentialTrainer, then play the greedy policy.

The hyperparameters are skrl's own Taxi SARSA example's (a Q-table of ones, epsilon-greedy with epsilon 0.1,
discount 0.999, SARSA_DEFAULT_CONFIG's learning rate 0.5 (skrl's example also sets cfg["alpha"] = 0.4, a key its
agent never reads), 80k steps), so the figures in docs/benchmarks.md compare like with like. A greedy tabular policy
can loop (e.g. between two cells whose greedy actions point at each other) until Taxi truncates the episode at 200
steps: the script says how many evaluation episodes did. About 10-20 s on one core.
Run: python examples/torch/sarsa_taxi.py [--timesteps 80000] [--seed 42] [--num-envs 1]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch

from skrl_like.torch.agents.sarsa import SARSA, SARSA_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.models import Model, TabularMixin
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

EPSILON = 0.1
TIMESTEPS = 80_000
SARSA_CFG = {"discount_factor": 0.999}
TASK = "Taxi-v4" if "Taxi-v4" in gym.envs.registry else "Taxi-v3"  # gymnasium >= 1.2 has v4
TIME_LIMIT = 200  # Taxi's episodes are truncated after 200 steps


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
        return wrap_env(gym.make(TASK), verbose=False)
    return wrap_env(gym.make_vec(TASK, num_envs=num_envs), verbose=False)


def make_agent(env, experiment=None, epsilon=EPSILON, **cfg):
    """A SARSA agent for ``env``; keyword arguments override entries of ``SARSA_CFG``."""
    cfg = {**SARSA_DEFAULT_CONFIG, **SARSA_CFG, **cfg, "experiment": experiment or {"directory": "runs/torch/taxi"}}
    policy = EpsilonGreedyPolicy(env.observation_space, env.action_space, env.device, env.num_envs, epsilon)
    return SARSA(
        models={"policy": policy},
        memory=None,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


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
    returns = np.array(trainer.evaluate_episodes(num_episodes=20, max_timesteps=100_000))
    # a delivery pays +20 after at most 199 steps of -1 (return >= -179); a loop reaches the limit (return <= -200)
    looped = int(np.sum(returns <= -TIME_LIMIT))
    print(f"Greedy evaluation (20 episodes): mean return {returns.mean():.1f}; {looped} looped until truncation")


if __name__ == "__main__":
    main()
