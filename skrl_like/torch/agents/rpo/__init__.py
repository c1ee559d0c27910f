"""Robust Policy Optimization (torch)."""

from skrl_like.torch.agents.rpo.rpo import RPO, RPO_DEFAULT_CONFIG

__all__ = ["RPO", "RPO_DEFAULT_CONFIG"]
