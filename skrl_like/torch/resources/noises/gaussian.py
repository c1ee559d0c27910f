"""``GaussianNoise``: i.i.d. normal noise."""

from typing import Sequence, Union

import torch

from skrl_like.core.agents.checks import check_noise_parameters
from skrl_like.torch.resources.noises.base import Noise


class GaussianNoise(Noise):
    """Independent normal noise ``N(mean, std)`` for every element (uses torch's global RNG).

    :param mean: mean of the distribution.
    :param std: standard deviation (the exploration scale).
    :param device: where the samples are created.
    """

    def __init__(self, mean: float, std: float, device: Union[str, torch.device, None] = None) -> None:
        check_noise_parameters("GaussianNoise", mean=mean, std=std)
        super().__init__(device)
        self.distribution = torch.distributions.Normal(
            loc=torch.tensor(mean, dtype=torch.float32, device=self.device),
            scale=torch.tensor(std, dtype=torch.float32, device=self.device),
            validate_args=False,  # checked above, with the parameter named; std=0 samples the mean, as in JAX
        )

    def sample(self, size: Union[Sequence[int], torch.Size]) -> torch.Tensor:
        """A sample of shape ``size``."""
        return self.distribution.sample(torch.Size(size))
