"""Exploration noises for the JAX backend."""

from skrl_like.jax.resources.noises.base import Noise
from skrl_like.jax.resources.noises.gaussian import GaussianNoise
from skrl_like.jax.resources.noises.ornstein_uhlenbeck import OrnsteinUhlenbeckNoise

__all__ = ["Noise", "GaussianNoise", "OrnsteinUhlenbeckNoise"]
