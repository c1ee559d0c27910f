"""Robust Policy Optimization (JAX)."""

from skrl_like.jax.agents.rpo.rpo import RPO, RPO_DEFAULT_CONFIG

__all__ = ["RPO", "RPO_DEFAULT_CONFIG"]
