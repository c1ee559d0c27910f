"""The JAX ``Trainer`` base: overrides only the tensor hooks of the neutral ``TrainerCore`` (JAX has no autograd)."""

from typing import Any, List

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.trainer import TrainerCore, generate_equally_spaced_scopes


class Trainer(TrainerCore):
    __doc__ = TrainerCore.__doc__

    def _stack(self, arrays: List[Any]) -> Any:
        return jnp.vstack(arrays) if isinstance(arrays[0], jax.Array) else np.vstack(arrays)

    def _info_scalar(self, value: Any) -> Any:
        # kept as an array: it is converted when written, so logging never syncs the device
        return value if isinstance(value, (np.ndarray, jax.Array)) and value.size == 1 else None

    def _to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def _is_distributed_worker(self) -> bool:
        return config.jax.is_distributed and config.jax.rank != 0


__all__ = ["Trainer", "generate_equally_spaced_scopes"]
