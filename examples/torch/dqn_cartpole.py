"""Train DQN (or DDQN) on CartPole-v1 with SequentialTrainer, then evaluate greedily (exploration off).

Run: python examples/torch/dqn_cartpole.py [--algorithm DQN|DDQN] [--timesteps 100000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small MLPs run fastest on one intra-op thread

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.dqn import DDQN, DDQN_DEFAULT_CONFIG, DQN, DQN_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

ALGORITHMS = {"DQN": (DQN, DQN_DEFAULT_CONFIG), "DDQN": (DDQN, DDQN_DEFAULT_CONFIG)}

# the hyperparameters this repository benchmarks (docs/benchmarks.md); the JAX example uses the same
HYPERPARAMETERS = {
    "memory_size": 100_000,  # replay rows per env: the whole 100k-step run (the first episodes' failures stay)
    "batch_size": 256,
    "discount_factor": 0.99,
    "learning_rate": 5e-4,
    "learning_starts": 1000,
    "update_interval": 1,
    "gradient_steps": 1,
    "target_update_interval": 500,  # a hard copy of the online network every 500 steps ...
    "polyak": 1.0,  # ... (its target held still between copies)
    "exploration": {"initial_epsilon": 1.0, "final_epsilon": 0.02, "timesteps": 2000},
}
# Why (docs/agents/dqn.md, docs/benchmarks.md): with a 50k memory, batch 64 and a soft target (polyak 0.01 at every
# step) the greedy DQN of tuned/dqn_cartpole.yaml reached 500 mid-run and fell back by 100k steps on untuned seeds
# (JAX seed 7: 141, seed 123: 124); with these it gives 500 there and on torch seed 7, though torch seeds 2 and 3
# and JAX seeds 5 and 8 still miss. DDQN shares them (session 11 found them for DDQN)
DDQN_HYPERPARAMETERS = dict(HYPERPARAMETERS)


class QNetwork(DeterministicMixin, Model):
    """64x64 ReLU MLP, one Q-value per action."""

    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, 64),
            nn.ReLU(),
            nn.Linear(64, 64),
            nn.ReLU(),
            nn.Linear(64, self.num_actions),
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, algorithm="DQN", experiment=None):
    """DQN with :data:`HYPERPARAMETERS`, or DDQN with :data:`DDQN_HYPERPARAMETERS`."""
    agent_class, default_config = ALGORITHMS[algorithm]
    settings = dict(HYPERPARAMETERS if algorithm == "DQN" else DDQN_HYPERPARAMETERS)
    memory_size = settings.pop("memory_size")
    cfg = {
        **default_config,
        **settings,
        "experiment": experiment
        or {"directory": "runs/torch/cartpole_dqn", "write_interval": "auto", "checkpoint_interval": "auto"},
    }
    models = {
        role: QNetwork(env.observation_space, env.action_space, env.device)
        for role in ("q_network", "target_q_network")
    }
    memory = RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device)
    return agent_class(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="DQN")
    parser.add_argument("--timesteps", type=int, default=100_000, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = wrap_env(gym.make("CartPole-v1"))
    agent = make_agent(env, args.algorithm)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(f"Final evaluation (20 greedy episodes): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}")


if __name__ == "__main__":
    main()
