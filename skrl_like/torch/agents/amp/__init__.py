"""Adversarial Motion Priors (torch)."""

from skrl_like.torch.agents.amp.amp import AMP, AMP_DEFAULT_CONFIG

__all__ = ["AMP", "AMP_DEFAULT_CONFIG"]
