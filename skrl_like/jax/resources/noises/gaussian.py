"""Independent Gaussian exploration noise."""

from typing import Any, Sequence, Union

import jax

from skrl_like.core.agents.checks import check_noise_parameters
from skrl_like.jax.resources.noises.base import Noise


class GaussianNoise(Noise):
    """I.i.d. Gaussian noise ``N(mean, std)``, independent between steps.

    :param mean: mean of the noise.
    :param std: standard deviation of the noise (the exploration strength).
    :param device: JAX device of the samples with the ``"jax"`` backend.
    """

    def __init__(self, mean: float, std: float, device: Union[str, jax.Device, None] = None) -> None:
        check_noise_parameters("GaussianNoise", mean=mean, std=std)
        super().__init__(device)
        self.mean = float(mean)
        self.std = float(std)

    def sample(self, size: Sequence[int]) -> Any:
        """A float32 sample of shape ``size``."""
        return self._standard_normal(size) * self.std + self.mean
