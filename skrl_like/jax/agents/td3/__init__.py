"""Twin Delayed DDPG (JAX)."""

from skrl_like.jax.agents.td3.td3 import TD3, TD3_DEFAULT_CONFIG

__all__ = ["TD3", "TD3_DEFAULT_CONFIG"]
