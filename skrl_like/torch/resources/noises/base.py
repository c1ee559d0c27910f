"""``Noise``: base class of the exploration noises."""

from typing import Sequence, Union

import torch

from skrl_like import config


class Noise:
    """Base class of the exploration noises added to deterministic actions (DDPG, TD3).

    :param device: where the samples are created (``None``: the default device rule of ``config.torch``).
    """

    def __init__(self, device: Union[str, torch.device, None] = None) -> None:
        self.device = config.torch.parse_device(device)

    def sample_like(self, tensor: torch.Tensor) -> torch.Tensor:
        """A sample with the shape of ``tensor`` (typically the actions it will be added to)."""
        return self.sample(tensor.shape)

    def sample(self, size: Union[Sequence[int], torch.Size]) -> torch.Tensor:
        """A sample of shape ``size`` (defined by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement sample()")
