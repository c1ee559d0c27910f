"""Learning-rate schedulers for the JAX backend."""

from skrl_like.jax.resources.schedulers.exponential import ExponentialLR
from skrl_like.jax.resources.schedulers.kl_adaptive import KLAdaptiveLR, KLAdaptiveRL, kl_adaptive
from skrl_like.jax.resources.schedulers.linear import LinearLR

__all__ = ["ExponentialLR", "KLAdaptiveLR", "kl_adaptive", "KLAdaptiveRL", "LinearLR"]
