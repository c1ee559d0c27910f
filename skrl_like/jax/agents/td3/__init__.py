"""Twin Delayed DDPG (JAX)."""

from skrl_like.jax.agents.td3.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.jax.agents.td3.td3_rnn import TD3_RNN

__all__ = ["TD3", "TD3_DEFAULT_CONFIG", "TD3_RNN"]
