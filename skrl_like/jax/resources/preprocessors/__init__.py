"""Input preprocessors for the JAX backend."""

from skrl_like.jax.resources.preprocessors.running_standard_scaler import RunningStandardScaler

__all__ = ["RunningStandardScaler"]
