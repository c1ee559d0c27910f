"""Soft Actor-Critic (JAX)."""

from skrl_like.jax.agents.sac.sac import SAC, SAC_DEFAULT_CONFIG

__all__ = ["SAC", "SAC_DEFAULT_CONFIG"]
