"""The JAX backend (flax linen models, optax optimizers). Never imports torch."""
