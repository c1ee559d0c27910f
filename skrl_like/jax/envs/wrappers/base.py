"""Base classes of the JAX-backend environment wrappers (NumPy or JAX arrays in and out).

Outputs are NumPy arrays with the ``"numpy"`` backend, JAX arrays on ``wrapper.device`` with ``"jax"``
(``skrl_like.config.jax.backend`` when the wrapper is created): flat observations ``(num_envs, size)`` (float32 for
``Box``, int32 for discrete spaces), rewards float32 ``(num_envs, 1)``, terminated/truncated int8
``(num_envs, 1)``. The shared behaviour (attribute forwarding, spaces, the abstract API) is in
``skrl_like.core.envs.wrappers``.
"""

from typing import Any

import gymnasium
import numpy as np

from skrl_like import config
from skrl_like.core.envs.wrappers import MultiAgentEnvWrapperCore, WrapperCore
from skrl_like.jax.utils.spaces import flatten_tensorized_space, tensorize_space


class _JaxOutputs:
    def _parse_device(self, unwrapped: Any) -> Any:
        # environments that live on an accelerator announce it; the others run on the default JAX device
        return config.jax.parse_device(getattr(unwrapped, "device", None))

    def _setup_backend(self) -> None:
        # read once: the array type produced for the lifetime of this wrapper
        self._jax = config.jax.backend == "jax"


class Wrapper(_JaxOutputs, WrapperCore):
    __doc__ = WrapperCore.__doc__


class MultiAgentEnvWrapper(_JaxOutputs, MultiAgentEnvWrapperCore):
    __doc__ = MultiAgentEnvWrapperCore.__doc__


def flat_observations(space: gymnasium.Space, observations: Any) -> np.ndarray:
    """A batch of observations as one flat ``(batch, size)`` NumPy array: float32 for ``Box`` and floating-point
    composites, discrete spaces keep their integer dtype (what every JAX wrapper returns)."""
    flat = flatten_tensorized_space(tensorize_space(space, observations, _jax=False), _jax=False)
    if flat.dtype != np.float32 and (flat.dtype.kind == "f" or isinstance(space, gymnasium.spaces.Box)):
        flat = flat.astype(np.float32)
    return flat
