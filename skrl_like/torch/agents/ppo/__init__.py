"""Proximal Policy Optimization (torch)."""

from skrl_like.torch.agents.ppo.ppo import PPO, PPO_DEFAULT_CONFIG

__all__ = ["PPO", "PPO_DEFAULT_CONFIG"]
