"""Proximal Policy Optimization (torch)."""

from skrl_like.torch.agents.ppo.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.agents.ppo.ppo_rnn import PPO_RNN

__all__ = ["PPO", "PPO_DEFAULT_CONFIG", "PPO_RNN"]
