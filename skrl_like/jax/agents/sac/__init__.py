"""Soft Actor-Critic (JAX)."""

from skrl_like.jax.agents.sac.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.jax.agents.sac.sac_rnn import SAC_RNN

__all__ = ["SAC", "SAC_DEFAULT_CONFIG", "SAC_RNN"]
