"""Learning-rate schedulers for the JAX backend."""

from skrl_like.jax.resources.schedulers.exponential import ExponentialLR
from skrl_like.jax.resources.schedulers.kl_adaptive import KLAdaptiveLR, KLAdaptiveRL, kl_adaptive

__all__ = ["ExponentialLR", "KLAdaptiveLR", "kl_adaptive", "KLAdaptiveRL"]
