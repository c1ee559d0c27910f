"""Train CEM on CartPole-v1 with the JAX backend, then evaluate greedily (the most likely action).

The mirror of examples/torch/cem_cartpole.py (same hyperparameters). Acting is one jitted call per step; each update
is one compiled function (the elite rows picked by a mask, so it never recompiles).
Run: python examples/jax/cem_cartpole.py [--timesteps 100000] [--num-envs 4] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import numpy as np

from skrl_like.jax.agents.cem import CEM, CEM_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

# the hyperparameters this repository benchmarks (docs/benchmarks.md); the torch example uses the same
HYPERPARAMETERS = {
    "rollouts": 500,  # steps per env between updates, 4 envs by default; skrl's example: 1 env, 1000
    "percentile": 0.70,
    "discount_factor": 0.99,
    "learning_rate": 1e-2,
    "learning_starts": 100,
}


class Policy(CategoricalMixin, Model):
    """64x64 ReLU MLP, one logit per action."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.relu(nn.Dense(64)(inputs["states"]))
        x = nn.relu(nn.Dense(64)(x))
        return nn.Dense(self.num_actions)(x), {}


def make_env(num_envs=1):
    if num_envs == 1:
        return wrap_env(gym.make("CartPole-v1"))
    return wrap_env(gym.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="sync"))


def make_agent(env, experiment=None, **overrides):
    """CEM with :data:`HYPERPARAMETERS` (updated with ``overrides``)."""
    cfg = {
        **CEM_DEFAULT_CONFIG,
        **HYPERPARAMETERS,
        **overrides,
        "experiment": experiment
        or {"directory": "runs/jax/cartpole_cem", "write_interval": "auto", "checkpoint_interval": "auto"},
    }
    policy = Policy(env.observation_space, env.action_space, env.device)
    policy.init_state_dict("policy")
    policy.init_parameters(method_name="normal", stddev=0.1)  # as skrl's CartPole CEM example
    memory = RandomMemory(memory_size=cfg["rollouts"], num_envs=env.num_envs, device=env.device)
    return CEM(
        models={"policy": policy},
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=100_000, help="environment steps (all envs together)")
    parser.add_argument("--num-envs", type=int, default=4)  # 4 envs x rollouts 500: docs/agents/cem.md
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    env = make_env(args.num_envs)
    agent = make_agent(env)
    timesteps = args.timesteps // args.num_envs
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(f"Final evaluation (20 greedy episodes): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}")


if __name__ == "__main__":
    main()
