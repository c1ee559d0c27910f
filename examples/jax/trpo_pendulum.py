"""Train TRPO on Pendulum-v1 (4 sync vector envs) with the JAX backend, then evaluate with exploration off.

The mirror of examples/torch/trpo_pendulum.py (the same hyperparameters; skrl 1.4.3 has no JAX TRPO). After 200k
steps seeds 0, 1 and 42 evaluated at -218, -212 and -107 (10 episodes, exploration off).
Run: python examples/jax/trpo_pendulum.py [--timesteps 200000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.relu(nn.Dense(64)(inputs["states"]))
        x = nn.relu(nn.Dense(64)(x))
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        return 2 * nn.tanh(nn.Dense(self.num_actions)(x)), log_std, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.relu(nn.Dense(64)(inputs["states"]))
        x = nn.relu(nn.Dense(64)(x))
        return nn.Dense(1)(x), {}


def make_agent(env, rollouts=512, experiment=None):
    """The same hyperparameters as the torch example."""
    cfg = {
        **TRPO_DEFAULT_CONFIG,
        "rollouts": rollouts,
        "learning_epochs": 10,
        "mini_batches": 32,
        "discount_factor": 0.9,
        "lambda": 0.95,
        "value_learning_rate": 1e-3,
        "grad_norm_clip": 0.5,
        "value_loss_scale": 0.5,
        "max_kl_divergence": 0.05,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space, "device": env.device},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1, "device": env.device},
        "experiment": experiment or {"directory": "runs/jax/pendulum_trpo"},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return TRPO(
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
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    env = wrap_env(gym.make_vec("Pendulum-v1", num_envs=args.num_envs, vectorization_mode="sync"))
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
