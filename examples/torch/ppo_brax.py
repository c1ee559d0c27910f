"""Train torch PPO on a Brax environment: brax steps in JAX, and the wrapper hands its arrays to torch by DLPack
(shared memory on the same device, no host copy). Needs the brax extra (pip install 'skrl_like[brax]').

Run: python examples/torch/ppo_brax.py [--env inverted_pendulum] [--backend positional] [--num_envs 64]
     [--timesteps 20000] [--seed 0]
"""

import argparse
import sys

import torch
import torch.nn as nn

from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
            nn.Linear(64, self.num_actions),
        )  # fmt: skip
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), self.log_std_parameter, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", default="inverted_pendulum")
    parser.add_argument("--backend", default="positional", help="brax's physics pipeline")
    parser.add_argument("--num_envs", type=int, default=64)
    parser.add_argument("--episode_length", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--timesteps", type=int, default=20000, help="env steps per sub-environment")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        from brax import envs
    except ImportError:
        print("This example needs brax: pip install 'skrl_like[brax]'. Skipped.")
        return 0
    set_seed(args.seed)
    env = envs.get_environment(args.env, backend=args.backend)
    env = wrap_env(env, num_envs=args.num_envs, episode_length=args.episode_length)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": args.rollouts,
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
        "experiment": {"directory": "runs/torch/brax", "write_interval": 0, "checkpoint_interval": 0},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    memory = RandomMemory(memory_size=args.rollouts, num_envs=env.num_envs, device=env.device)
    agent = PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                action_space=env.action_space, device=env.device)  # fmt: skip
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True}).train()
    return 0


if __name__ == "__main__":
    sys.exit(main())
