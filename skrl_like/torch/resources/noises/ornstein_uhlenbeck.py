"""``OrnsteinUhlenbeckNoise``: temporally correlated noise that reverts towards 0."""

from typing import Sequence, Union

import torch

from skrl_like.core.agents.checks import check_noise_parameters
from skrl_like.torch.resources.noises.base import Noise


class OrnsteinUhlenbeckNoise(Noise):
    """Ornstein-Uhlenbeck process: ``state <- (1 - theta) * state + sigma * eps``, sample ``base_scale * state``.

    Consecutive samples are correlated, which gives smoother exploration for physical control. The state restarts
    from 0 when the requested shape changes (e.g. a different number of environments).

    :param theta: mean-reversion rate (fraction of the state removed per sample).
    :param sigma: scale of the random increment.
    :param base_scale: factor applied to the returned state.
    :param mean: mean of the increment's normal distribution ``eps``.
    :param std: standard deviation of ``eps``.
    :param device: where the samples are created.
    """

    def __init__(
        self,
        theta: float,
        sigma: float,
        base_scale: float,
        mean: float = 0,
        std: float = 1,
        device: Union[str, torch.device, None] = None,
    ) -> None:
        check_noise_parameters(
            "OrnsteinUhlenbeckNoise", theta=theta, sigma=sigma, base_scale=base_scale, mean=mean, std=std
        )
        super().__init__(device)
        self.state: Union[float, torch.Tensor] = 0
        self.theta = theta
        self.sigma = sigma
        self.base_scale = base_scale
        self.distribution = torch.distributions.Normal(
            loc=torch.tensor(mean, dtype=torch.float32, device=self.device),
            scale=torch.tensor(std, dtype=torch.float32, device=self.device),
            validate_args=False,  # checked above, with the parameter named; std=0 samples the mean, as in JAX
        )

    def sample(self, size: Union[Sequence[int], torch.Size]) -> torch.Tensor:
        """The next sample of the process, of shape ``size``."""
        size = torch.Size(size)
        if isinstance(self.state, torch.Tensor) and self.state.shape != size:
            self.state = 0
        increment = self.distribution.sample(size)
        self.state = self.state - self.theta * self.state + self.sigma * increment
        return self.base_scale * self.state
