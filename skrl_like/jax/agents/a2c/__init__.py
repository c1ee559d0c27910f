"""Advantage Actor-Critic (JAX)."""

from skrl_like.jax.agents.a2c.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.jax.agents.a2c.a2c_rnn import A2C_RNN

__all__ = ["A2C", "A2C_DEFAULT_CONFIG", "A2C_RNN"]
