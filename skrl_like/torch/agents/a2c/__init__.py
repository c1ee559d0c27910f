"""Advantage Actor-Critic (torch)."""

from skrl_like.torch.agents.a2c.a2c import A2C, A2C_DEFAULT_CONFIG

__all__ = ["A2C", "A2C_DEFAULT_CONFIG"]
