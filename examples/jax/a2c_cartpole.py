"""Train A2C on CartPole-v1 (8 sync vector envs) with the JAX backend, then evaluate with exploration off.

The mirror of examples/torch/a2c_cartpole.py (same hyperparameters). Acting is one jitted call per step and
each update is one compiled function. Run: python examples/jax/a2c_cartpole.py [--timesteps 200000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import numpy as np

from skrl_like.jax.agents.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed


def mlp(x, out_features, head_gain):
    """64x64 tanh MLP, orthogonal weights (hidden gain sqrt(2), a small policy head), zero biases."""
    for _ in range(2):
        x = nn.tanh(nn.Dense(64, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
    return nn.Dense(out_features, kernel_init=nn.initializers.orthogonal(head_gain))(x)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], self.num_actions, head_gain=0.01), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], 1, head_gain=1.0), {}


def make_agent(env, rollouts=8, experiment=None):
    """A2C with the hyperparameters this repository benchmarks (docs/agents/a2c.md); same as the torch example."""
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
        or {"directory": "runs/jax/cartpole_a2c", "write_interval": "auto", "checkpoint_interval": "auto"},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    for role, model in models.items():
        model.init_state_dict(role)
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
