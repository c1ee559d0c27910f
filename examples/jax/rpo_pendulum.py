"""Train RPO on Pendulum-v1 (4 sync vector envs) with the JAX backend, then evaluate with exploration off.

The mirror of examples/torch/rpo_pendulum.py: the policy perturbs its mean action by U(-alpha, alpha), drawn with
``inputs["key"]`` (a fresh key for every acting step and every mini-batch of the update); the same hyperparameters.
Run: python examples/jax/rpo_pendulum.py [--timesteps 400000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-1.0, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.relu(nn.Dense(64)(inputs["states"]))
        x = nn.relu(nn.Dense(64)(x))
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        mean = 2 * nn.tanh(nn.Dense(self.num_actions)(x))  # Pendulum's actions lie in [-2, 2]
        alpha = inputs.get("alpha", 0.0)  # (absent when the parameters are initialised)
        if "key" in inputs:
            mean = mean + jax.random.uniform(inputs["key"], mean.shape, minval=-alpha, maxval=alpha)
        return mean, log_std, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.relu(nn.Dense(64)(inputs["states"]))
        x = nn.relu(nn.Dense(64)(x))
        return nn.Dense(1)(x), {}


def make_agent(env, rollouts=1024, experiment=None):
    """The same hyperparameters as the torch example."""
    cfg = {
        **RPO_DEFAULT_CONFIG,
        "rollouts": rollouts,
        "alpha": 0.5,
        "learning_epochs": 10,
        "mini_batches": 32,
        "discount_factor": 0.9,
        "lambda": 0.95,
        # no KLAdaptiveLR: the perturbation alone puts the KL between the update's and the rollout's (independently
        # perturbed) policies above any small threshold, which would shrink the rate to its minimum
        "learning_rate": 3e-4,
        "learning_rate_scheduler": None,
        "grad_norm_clip": 0.5,
        "ratio_clip": 0.2,
        "value_clip": 0.2,
        "clip_predicted_values": False,
        "entropy_loss_scale": 0.0,
        "value_loss_scale": 0.5,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space, "device": env.device},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1, "device": env.device},
        "experiment": experiment or {"directory": "runs/jax/pendulum_rpo"},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return RPO(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=400_000, help="environment steps in total (all envs)")
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
