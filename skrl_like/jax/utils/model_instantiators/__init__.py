"""Build JAX models from a declarative network definition (dicts/YAML), without evaluating user code."""

from skrl_like.jax.utils.model_instantiators.categorical import categorical_model
from skrl_like.jax.utils.model_instantiators.common import Shape
from skrl_like.jax.utils.model_instantiators.deterministic import deterministic_model
from skrl_like.jax.utils.model_instantiators.gaussian import gaussian_model
from skrl_like.jax.utils.model_instantiators.multicategorical import multicategorical_model

__all__ = ["categorical_model", "deterministic_model", "gaussian_model", "multicategorical_model", "Shape"]
