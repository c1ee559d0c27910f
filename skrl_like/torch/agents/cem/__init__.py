"""Cross-Entropy Method (torch)."""

from skrl_like.torch.agents.cem.cem import CEM, CEM_DEFAULT_CONFIG

__all__ = ["CEM", "CEM_DEFAULT_CONFIG"]
