"""Cross-Entropy Method (JAX)."""

from skrl_like.jax.agents.cem.cem import CEM, CEM_DEFAULT_CONFIG

__all__ = ["CEM", "CEM_DEFAULT_CONFIG"]
