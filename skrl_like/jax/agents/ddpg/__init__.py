"""Deep Deterministic Policy Gradient (JAX)."""

from skrl_like.jax.agents.ddpg.ddpg import DDPG, DDPG_DEFAULT_CONFIG
from skrl_like.jax.agents.ddpg.ddpg_rnn import DDPG_RNN

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG", "DDPG_RNN"]
