"""Trust Region Policy Optimization (JAX)."""

from skrl_like.jax.agents.trpo.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.jax.agents.trpo.trpo_rnn import TRPO_RNN

__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG", "TRPO_RNN"]
