"""The JAX backend (flax linen models, optax optimizers). Never imports torch."""

from skrl_like import config

config.jax.init_distributed()  # under the JAX launcher: join the other processes before any computation
