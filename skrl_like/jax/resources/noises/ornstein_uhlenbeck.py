"""Ornstein-Uhlenbeck exploration noise (temporally correlated)."""

from typing import Any, Sequence, Union

import jax

from skrl_like.core.agents.checks import check_noise_parameters
from skrl_like.jax.resources.noises.base import Noise


class OrnsteinUhlenbeckNoise(Noise):
    """Temporally correlated noise: ``state = (1 - theta) * state + sigma * eps``, returned as ``base_scale * state``.

    :param theta: mean-reversion rate towards 0 (per sample; there is no time step).
    :param sigma: scale of the Gaussian innovation ``eps``.
    :param base_scale: factor applied to the returned state.
    :param mean: mean of ``eps``.
    :param std: standard deviation of ``eps``.
    :param device: JAX device of the samples with the ``"jax"`` backend.

    Correlated noise explores further than independent noise in physical control tasks with inertia. The state
    restarts from 0 when the requested shape changes.
    """

    def __init__(
        self,
        theta: float,
        sigma: float,
        base_scale: float,
        mean: float = 0,
        std: float = 1,
        device: Union[str, jax.Device, None] = None,
    ) -> None:
        check_noise_parameters(
            "OrnsteinUhlenbeckNoise", theta=theta, sigma=sigma, base_scale=base_scale, mean=mean, std=std
        )
        super().__init__(device)
        self.theta = theta
        self.sigma = sigma
        self.base_scale = base_scale
        self.mean = float(mean)
        self.std = float(std)
        self.state: Any = 0

    def sample(self, size: Sequence[int]) -> Any:
        """The next state of the process, scaled by ``base_scale``, of shape ``size``."""
        size = tuple(size)
        if hasattr(self.state, "shape") and self.state.shape != size:
            self.state = 0
        eps = self._standard_normal(size) * self.std + self.mean
        self.state = self.state - self.theta * self.state + self.sigma * eps
        return self.base_scale * self.state
