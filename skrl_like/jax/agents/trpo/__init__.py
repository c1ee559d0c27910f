"""Trust Region Policy Optimization (JAX)."""

from skrl_like.jax.agents.trpo.trpo import TRPO, TRPO_DEFAULT_CONFIG

__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG"]
