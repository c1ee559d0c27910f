"""Deep Deterministic Policy Gradient (JAX)."""

from skrl_like.jax.agents.ddpg.ddpg import DDPG, DDPG_DEFAULT_CONFIG

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG"]
