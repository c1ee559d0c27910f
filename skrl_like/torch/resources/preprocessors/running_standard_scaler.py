"""``RunningStandardScaler``: standardise inputs with running mean/variance statistics."""

from typing import Sequence, Union

import gymnasium
import torch
from torch import nn

from skrl_like import config
from skrl_like.core.spaces import compute_space_size
from skrl_like.torch.utils.distributed import moments


class RunningStandardScaler(nn.Module):
    """Standardise inputs with a running mean and variance (parallel/Chan update), clipped to a threshold.

    The statistics are float64 buffers (``running_mean``, ``running_variance``, ``current_count``), so they are
    saved in checkpoints and stay accurate over millions of samples; the transform itself runs in float32.

    :param size: feature size: an int, a shape or a gymnasium space (its occupied size).
    :param epsilon: added to the standard deviation so that constant features do not divide by zero.
    :param clip_threshold: standardised values (and inverse-transform inputs) are clipped to
        ``[-clip_threshold, clip_threshold]`` so that outliers cannot blow up the networks' inputs.
    :param device: where the statistics live.
    """

    def __init__(
        self,
        size: Union[int, Sequence[int], gymnasium.Space],
        epsilon: float = 1e-8,
        clip_threshold: float = 5.0,
        device: Union[str, torch.device, None] = None,
    ) -> None:
        super().__init__()
        self.epsilon = epsilon
        self.clip_threshold = clip_threshold
        self.device = config.torch.parse_device(device)

        size = compute_space_size(size, occupied_size=True)
        self.register_buffer("running_mean", torch.zeros(size, dtype=torch.float64, device=self.device))
        self.register_buffer("running_variance", torch.ones(size, dtype=torch.float64, device=self.device))
        self.register_buffer("current_count", torch.ones((), dtype=torch.float64, device=self.device))

    def _update(self, x: torch.Tensor) -> None:
        # the batch's moments (unbiased variance, as skrl; a single row carries no spread: 0, not skrl's NaN, which
        # poisoned the statistics); in a distributed run those of every process's batch together, merged by counts
        batch_count, batch_mean, batch_variance = moments(x, (0, 1) if x.dim() == 3 else (0,))
        # merge the batch statistics into the running ones (Chan et al.'s parallel variance formula)
        delta = batch_mean.double() - self.running_mean
        total_count = self.current_count + batch_count
        squared_sum = (
            self.running_variance * self.current_count
            + batch_variance.double() * batch_count
            + delta**2 * self.current_count * batch_count / total_count
        )
        self.running_mean.add_(delta * batch_count / total_count)
        self.running_variance.copy_(squared_sum / total_count)
        self.current_count.copy_(total_count)

    def _compute(self, x: torch.Tensor, train: bool = False, inverse: bool = False) -> torch.Tensor:
        # [compat] the statistics are updated first, so this batch is transformed with them already included
        if train:
            self._update(x)
        mean = self.running_mean.float()
        variance = self.running_variance.float()
        if inverse:
            # [compat] no epsilon in the inverse transform
            return torch.sqrt(variance) * torch.clamp(x, -self.clip_threshold, self.clip_threshold) + mean
        return torch.clamp(
            (x - mean) / (torch.sqrt(variance) + self.epsilon), -self.clip_threshold, self.clip_threshold
        )

    def forward(
        self, x: torch.Tensor, train: bool = False, inverse: bool = False, no_grad: bool = True
    ) -> torch.Tensor:
        """Standardise ``x`` (or undo it with ``inverse``), updating the statistics first when ``train``.

        :param x: ``(batch, size)`` or ``(sequence, batch, size)``.
        :param train: fold ``x`` into the running statistics before transforming it.
        :param inverse: map standardised values back to the original scale.
        :param no_grad: run without building a graph (the usual case: the scaler is not trained by gradients).
        """
        if x.shape[-1] != self.running_mean.shape[0]:
            raise ValueError(
                f"RunningStandardScaler: input has {x.shape[-1]} features but the scaler was built for "
                f"{self.running_mean.shape[0]}: create it with size equal to the input's last dimension"
            )
        if no_grad:
            with torch.no_grad():
                return self._compute(x, train, inverse)
        return self._compute(x, train, inverse)
