"""torch models: the ``Model`` base and the mixins that turn network outputs into actions."""

from skrl_like.torch.models.base import Model
from skrl_like.torch.models.categorical import CategoricalMixin
from skrl_like.torch.models.deterministic import DeterministicMixin
from skrl_like.torch.models.gaussian import GaussianMixin
from skrl_like.torch.models.multicategorical import MultiCategoricalMixin
from skrl_like.torch.models.multivariate_gaussian import MultivariateGaussianMixin
from skrl_like.torch.models.tabular import TabularMixin

__all__ = [
    "Model",
    "GaussianMixin",
    "MultivariateGaussianMixin",
    "DeterministicMixin",
    "CategoricalMixin",
    "MultiCategoricalMixin",
    "TabularMixin",
]
