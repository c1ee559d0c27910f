"""Train RPO on Pendulum-v1 (4 sync vector envs) with SequentialTrainer, then evaluate with exploration off.

RPO is PPO whose policy perturbs its mean action by U(-alpha, alpha), alpha read from ``inputs["alpha"]`` (the agent
passes ``cfg["alpha"]`` to every model call). The hyperparameters are those of examples/torch/ppo_pendulum.py (skrl's
Pendulum PPO example: rollouts 1024, 10 epochs x 32 mini-batches, standardised states and values) with alpha 0.5,
RPO's default, except: a constant learning rate of 3e-4 instead of KLAdaptiveLR, and the policy's log standard
deviation kept >= -1 (a tiny standard deviation with perturbed means overflows the probability ratio).
Run: python examples/torch/rpo_pendulum.py [--timesteps 400000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-1.0, max_log_std=2)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, 64),
            nn.ReLU(),
            nn.Linear(64, 64),
            nn.ReLU(),
            nn.Linear(64, self.num_actions),
        )
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        mean = 2 * torch.tanh(self.net(inputs["states"]))  # Pendulum's actions lie in [-2, 2]
        alpha = inputs["alpha"]
        return mean + torch.empty_like(mean).uniform_(-alpha, alpha), self.log_std_parameter, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, rollouts=1024, experiment=None):
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
        "experiment": experiment or {"directory": "runs/torch/pendulum_rpo"},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
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

    torch.set_num_threads(1)
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
