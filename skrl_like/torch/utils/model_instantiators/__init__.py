"""Build torch models from declarative network definitions (dicts or YAML), without executing user text."""

from skrl_like.torch.utils.model_instantiators._instantiators import (
    categorical_model,
    deterministic_model,
    gaussian_model,
    multicategorical_model,
    multivariate_gaussian_model,
    shared_model,
)
from skrl_like.torch.utils.model_instantiators.common import Shape
from skrl_like.torch.utils.model_instantiators.tabular import tabular_model

__all__ = [
    "categorical_model",
    "deterministic_model",
    "gaussian_model",
    "multicategorical_model",
    "multivariate_gaussian_model",
    "shared_model",
    "tabular_model",
    "Shape",
]
