"""Exploration noises (torch): ``Noise``, ``GaussianNoise``, ``OrnsteinUhlenbeckNoise``."""

from skrl_like.torch.resources.noises.base import Noise
from skrl_like.torch.resources.noises.gaussian import GaussianNoise
from skrl_like.torch.resources.noises.ornstein_uhlenbeck import OrnsteinUhlenbeckNoise

__all__ = ["GaussianNoise", "Noise", "OrnsteinUhlenbeckNoise"]
