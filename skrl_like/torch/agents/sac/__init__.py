"""Soft Actor-Critic (torch)."""

from skrl_like.torch.agents.sac.sac import SAC, SAC_DEFAULT_CONFIG

__all__ = ["SAC", "SAC_DEFAULT_CONFIG"]
