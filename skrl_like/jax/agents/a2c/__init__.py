"""Advantage Actor-Critic (JAX)."""

from skrl_like.jax.agents.a2c.a2c import A2C, A2C_DEFAULT_CONFIG

__all__ = ["A2C", "A2C_DEFAULT_CONFIG"]
