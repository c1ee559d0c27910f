"""JAX optimizers (optax-based, immutable)."""

from skrl_like.jax.resources.optimizers.adam import Adam, Optimizer

__all__ = ["Adam", "Optimizer"]
