"""Train DQN (or DDQN) on CartPole-v1 with the JAX backend, then evaluate greedily (exploration off).

The mirror of examples/torch/dqn_cartpole.py (same hyperparameters). Acting (epsilon-greedy included) is one jitted
call per step and each update is one compiled function.
Run: python examples/jax/dqn_cartpole.py [--algorithm DQN|DDQN] [--timesteps 100000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax
import numpy as np

from skrl_like.jax.agents.dqn import DDQN, DDQN_DEFAULT_CONFIG, DQN, DQN_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

ALGORITHMS = {"DQN": (DQN, DQN_DEFAULT_CONFIG), "DDQN": (DDQN, DDQN_DEFAULT_CONFIG)}

# the hyperparameters this repository benchmarks (docs/benchmarks.md); the torch example uses the same
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


def torch_like_dense(features, fan_in):
    """A dense layer initialised as torch's ``nn.Linear`` (weights and biases ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))),
    so that both examples start from the same distribution (flax's default, LeCun-normal weights and zero biases,
    has sqrt(3) times their spread)."""
    bound = 1 / np.sqrt(fan_in)

    def uniform(key, shape, dtype=np.float32):
        return jax.random.uniform(key, shape, dtype, -bound, bound)

    return nn.Dense(features, kernel_init=uniform, bias_init=uniform)


class QNetwork(DeterministicMixin, Model):
    """64x64 ReLU MLP, one Q-value per action, initialised as the torch example's."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = inputs["states"]
        x = nn.relu(torch_like_dense(64, x.shape[-1])(x))
        x = nn.relu(torch_like_dense(64, 64)(x))
        return torch_like_dense(self.num_actions, 64)(x), {}


def make_agent(env, algorithm="DQN", experiment=None):
    """DQN with :data:`HYPERPARAMETERS`, or DDQN with :data:`DDQN_HYPERPARAMETERS`."""
    agent_class, default_config = ALGORITHMS[algorithm]
    settings = dict(HYPERPARAMETERS if algorithm == "DQN" else DDQN_HYPERPARAMETERS)
    memory_size = settings.pop("memory_size")
    cfg = {
        **default_config,
        **settings,
        "experiment": experiment
        or {"directory": "runs/jax/cartpole_dqn", "write_interval": "auto", "checkpoint_interval": "auto"},
    }
    models = {
        role: QNetwork(env.observation_space, env.action_space, env.device)
        for role in ("q_network", "target_q_network")
    }
    for role, model in models.items():
        model.init_state_dict(role)
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

    set_seed(args.seed)
    env = wrap_env(gym.make("CartPole-v1"))
    agent = make_agent(env, args.algorithm)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(f"Final evaluation (20 greedy episodes): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}")


if __name__ == "__main__":
    main()
