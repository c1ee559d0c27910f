"""Base class of exploration noises."""

from typing import Any, Sequence, Union

import jax
import numpy as np

from skrl_like import config


class Noise:
    """Base class of the noises added to actions for exploration.

    :param device: JAX device of the samples with the ``"jax"`` backend (``None``: default device).

    Samples are NumPy arrays (drawn from NumPy's global generator, seeded by ``set_seed``) with the ``"numpy"``
    backend, JAX arrays (drawn from ``config.jax.key``) with ``"jax"``.
    """

    def __init__(self, device: Union[str, jax.Device, None] = None) -> None:
        self.device = config.jax.parse_device(device)
        self._jax = config.jax.backend == "jax"
        self._draws = 0  # folded into the root key so that every JAX draw is new

    def _standard_normal(self, size: Sequence[int]) -> Any:
        if self._jax:
            key = jax.random.fold_in(config.jax.key, self._draws)
            self._draws += 1
            return jax.device_put(jax.random.normal(key, tuple(size)), self.device)
        return np.random.standard_normal(tuple(size)).astype(np.float32)

    def sample_like(self, tensor: Any) -> Any:
        """A sample with the shape of ``tensor``."""
        return self.sample(tensor.shape)

    def sample(self, size: Sequence[int]) -> Any:
        """A sample of shape ``size`` (implemented by subclasses)."""
        raise NotImplementedError("The sampling method (.sample()) is not implemented")
