"""JAX models: the ``Model`` base (flax linen) and the mixins that turn network outputs into actions."""

from skrl_like.jax.models.base import Model
from skrl_like.jax.models.categorical import CategoricalMixin
from skrl_like.jax.models.deterministic import DeterministicMixin
from skrl_like.jax.models.gaussian import GaussianMixin
from skrl_like.jax.models.multicategorical import MultiCategoricalMixin

__all__ = ["Model", "GaussianMixin", "DeterministicMixin", "CategoricalMixin", "MultiCategoricalMixin"]
