"""Train PPO_RNN with a GRU on velocity-masked Pendulum ("PendulumNoVel": the angular velocity reads 0), then
evaluate with exploration off and play one episode with ``compute_action`` carrying the hidden state.

Without the velocity a feedforward policy cannot tell a swing up from a swing down; the GRU recovers it from the
observations it has seen. The settings are skrl's own PendulumNoVel PPO GRU example's (4 envs, rollouts 1024,
sequences of 128 steps, 10 epochs x 32 mini-batches of one sequence each, KLAdaptiveLR, standardised states and
values). See docs/recurrent.md.
Run: python examples/torch/ppo_rnn_pendulumnovel.py [--timesteps 400000] [--seed 42] [--cell GRU|LSTM|RNN]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.ppo import PPO_DEFAULT_CONFIG, PPO_RNN
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class RecurrentTrunk(Model):
    """A recurrent layer over the observations, then a 64-unit tanh layer: what the policy and value share in form."""

    def __init__(self, observation_space, action_space, device, num_envs, cell, hidden_size, sequence_length):
        Model.__init__(self, observation_space, action_space, device)
        self.num_envs, self.cell, self.hidden_size, self.sequence_length = num_envs, cell, hidden_size, sequence_length
        self.rnn = make_recurrent_module(cell, self.num_observations, hidden_size)

    def get_specification(self):
        sizes = hidden_state_sizes(self.cell, 1, self.num_envs, self.hidden_size)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def features(self, inputs):
        # acting: one step per environment; training (train mode): sequences reset after inputs["terminated"]
        return recurrent_forward(
            self.rnn, inputs["states"], inputs["rnn"], self.sequence_length, inputs.get("terminated"), self.training
        )


class Policy(GaussianMixin, RecurrentTrunk):
    def __init__(self, observation_space, action_space, device, **recurrent):
        RecurrentTrunk.__init__(self, observation_space, action_space, device, **recurrent)
        GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = nn.Sequential(nn.Linear(self.hidden_size, 64), nn.ReLU(), nn.Linear(64, self.num_actions))
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        features, states = self.features(inputs)
        return 2 * torch.tanh(self.net(features)), self.log_std_parameter, {"rnn": states}


class Value(DeterministicMixin, RecurrentTrunk):
    def __init__(self, observation_space, action_space, device, **recurrent):
        RecurrentTrunk.__init__(self, observation_space, action_space, device, **recurrent)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.hidden_size, 64), nn.ReLU(), nn.Linear(64, 1))

    def compute(self, inputs, role):
        features, states = self.features(inputs)
        return self.net(features), {"rnn": states}


def make_env(num_envs):
    # skrl_like.envs registers PendulumNoVel-v1 (Pendulum-v1 with the velocity reading 0) when gymnasium imports it
    env = gym.make_vec("skrl_like.envs:PendulumNoVel-v1", num_envs=num_envs, vectorization_mode="sync")
    return wrap_env(env)


def make_agent(env, cell="GRU", rollouts=1024, sequence_length=128, mini_batches=32, experiment=None):
    recurrent = {"num_envs": env.num_envs, "cell": cell, "hidden_size": 64, "sequence_length": sequence_length}
    cfg = PPO_DEFAULT_CONFIG.copy()  # ratio and value clips 0.2, grad_norm_clip 0.5, lambda 0.95, lr 1e-3 as skrl's
    cfg.update(
        rollouts=rollouts,
        learning_epochs=10,
        mini_batches=mini_batches,
        discount_factor=0.9,
        learning_rate_scheduler=KLAdaptiveLR,
        learning_rate_scheduler_kwargs={"kl_threshold": 0.008},
        value_loss_scale=0.5,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": env.observation_space, "device": env.device},
        value_preprocessor=RunningStandardScaler,
        value_preprocessor_kwargs={"size": 1, "device": env.device},
        experiment=experiment or {"directory": "runs/torch/pendulumnovel"},
    )
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    models = {
        "policy": Policy(**spaces, device=env.device, **recurrent),
        "value": Value(**spaces, device=env.device, **recurrent),
    }
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return PPO_RNN(models=models, memory=memory, cfg=cfg, device=env.device, **spaces)


def play_one_episode(agent):
    """Deployment: a plain gymnasium env and ``compute_action``, the hidden state carried from step to step."""
    env = gym.make("skrl_like.envs:PendulumNoVel-v1")
    observation, _ = env.reset(seed=0)
    hidden_states, total, done = None, 0.0, False  # None: zero hidden states, a new episode
    while not done:
        action, hidden_states = agent.compute_action(observation, hidden_states=hidden_states)
        observation, reward, terminated, truncated, _ = env.step(action)
        total, done = total + reward, terminated or truncated
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=400_000, help="environment steps in total (all envs)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--cell", default="GRU", choices=["GRU", "LSTM", "RNN"])
    parser.add_argument("--rollouts", type=int, default=1024, help="a multiple of the sequence length")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--evaluation-episodes", type=int, default=20)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env(num_envs=4)
    # mini-batches of one sequence each, as skrl's settings (32 with the defaults)
    mini_batches = args.rollouts // args.sequence_length * env.num_envs
    agent = make_agent(env, args.cell, args.rollouts, args.sequence_length, mini_batches)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps // 4, "headless": True})
    trainer.train()
    returns = np.array(trainer.evaluate_episodes(num_episodes=args.evaluation_episodes))
    print(f"Evaluation over {len(returns)} episodes (exploration off): mean return {returns.mean():.1f}")
    print(f"One episode with compute_action and a carried hidden state: return {play_one_episode(agent):.1f}")


if __name__ == "__main__":
    main()
