"""Learning-rate schedule driven by the KL divergence between the old and the updated policy."""

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np


def KLAdaptiveLR(
    kl_threshold: float = 0.008,
    min_lr: float = 1e-6,
    max_lr: float = 1e-2,
    kl_factor: float = 2,
    lr_factor: float = 1.5,
) -> Callable[..., float]:
    """Build a schedule ``schedule(count, lr=None, kl=None) -> lr`` that adapts the learning rate to the KL.

    :param kl_threshold: target KL divergence per update.
    :param min_lr: the rate never goes below this.
    :param max_lr: the rate never goes above this.
    :param kl_factor: tolerance band around the target: the rate changes only when the KL leaves
        ``[kl_threshold / kl_factor, kl_threshold * kl_factor]``.
    :param lr_factor: factor the rate is divided (KL too high) or multiplied (KL too low) by.

    The schedule returns ``1.0`` without a rate (an optax-like neutral scale) and ``lr`` unchanged without a KL.
    Agents recognise it by identity (``scheduler is KLAdaptiveLR``) and pass the current rate and KL.
    """

    def schedule(count: Any, lr: Optional[float] = None, kl: Optional[Any] = None) -> float:
        if lr is None:
            return 1.0
        if kl is None:
            return lr
        if isinstance(kl, jax.core.Tracer) or isinstance(lr, jax.core.Tracer):
            # inside a jitted update (the JAX agents run the whole update as one compiled function)
            kl = jnp.reshape(kl, ())
            decreased = jnp.maximum(lr / lr_factor, min_lr)
            increased = jnp.minimum(lr * lr_factor, max_lr)
            return jnp.where(
                kl > kl_threshold * kl_factor, decreased, jnp.where(kl < kl_threshold / kl_factor, increased, lr)
            )
        kl = float(np.asarray(kl).item())  # float, 0-d or one-element NumPy/JAX array
        if kl > kl_threshold * kl_factor:
            return max(lr / lr_factor, min_lr)
        if kl < kl_threshold / kl_factor:
            return min(lr * lr_factor, max_lr)
        return lr

    return schedule


# skrl's names for the same schedule
kl_adaptive = KLAdaptiveLR
KLAdaptiveRL = KLAdaptiveLR
