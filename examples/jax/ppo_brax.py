"""Train PPO on a Brax environment with the CompiledTrainer: the whole run (env steps, rollouts, updates) is one
compiled JAX function, vmapped over seeds. Needs the brax extra (pip install 'skrl_like[brax]').

Run: python examples/jax/ppo_brax.py [--env inverted_pendulum] [--backend positional] [--num_envs 64]
     [--timesteps 20000] [--seeds 0 1 2]
"""

import argparse
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import CompiledTrainer
from skrl_like.utils import set_seed


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.tanh(nn.Dense(64)(inputs["states"]))
        x = nn.tanh(nn.Dense(64)(x))
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        return nn.Dense(self.num_actions)(x), log_std, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = nn.tanh(nn.Dense(64)(inputs["states"]))
        x = nn.tanh(nn.Dense(64)(x))
        return nn.Dense(1)(x), {}


def make_agent(env, rollouts=32):
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": rollouts,
        "learning_epochs": 4,
        "mini_batches": 4,
        "discount_factor": 0.97,
        "lambda": 0.95,
        "learning_rate": 3e-4,
        "grad_norm_clip": 1.0,
        "entropy_loss_scale": 1e-3,
        "time_limit_bootstrap": True,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space, "device": env.device},
        "experiment": {"directory": "runs/jax/brax", "write_interval": 0, "checkpoint_interval": 0},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
               action_space=env.action_space, device=env.device)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", default="inverted_pendulum")
    parser.add_argument("--backend", default="positional", help="brax's physics pipeline")
    parser.add_argument("--num_envs", type=int, default=64)
    parser.add_argument("--episode_length", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--timesteps", type=int, default=20000, help="env steps per sub-environment")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    try:
        from brax import envs
    except ImportError:
        print("This example needs brax: pip install 'skrl_like[brax]'. Skipped.")
        return 0
    set_seed(args.seeds[0])
    env = envs.get_environment(args.env, backend=args.backend)
    env = wrap_env(env, num_envs=args.num_envs, episode_length=args.episode_length)
    agent = make_agent(env, args.rollouts)
    cfg = {"timesteps": args.timesteps, "seeds": args.seeds, "disable_progressbar": True}
    metrics = CompiledTrainer(env=env, agents=agent, cfg=cfg).train()
    returns = np.asarray(metrics["Reward / Total reward (mean)"]).reshape(len(args.seeds), -1)
    for seed, run in zip(args.seeds, returns):
        print(f"seed {seed}: mean episode return over the last updates {np.nanmean(run[-5:]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
