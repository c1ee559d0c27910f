"""The JAX ``Trainer`` base: overrides only the tensor hooks of the neutral ``TrainerCore`` (JAX has no autograd)."""

import contextlib
from typing import Any, List

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.trainer import TrainerCore, generate_equally_spaced_scopes


class Trainer(TrainerCore):
    __doc__ = TrainerCore.__doc__

    def _no_grad(self) -> Any:
        # JAX has no autograd state to turn off; each step runs with the env's device as JAX's default device, so
        # the agents' jitted calls on uncommitted arrays run where the env's arrays and the models are (an env on the
        # CPU on a GPU machine would otherwise move every step's arrays to the GPU and back)
        device = getattr(self.env, "device", None)
        return jax.default_device(device) if isinstance(device, jax.Device) else contextlib.nullcontext()

    def _stack(self, arrays: List[Any]) -> Any:
        return jnp.vstack(arrays) if isinstance(arrays[0], jax.Array) else np.vstack(arrays)

    def _info_scalar(self, value: Any) -> Any:
        # kept as an array: it is converted when written, so logging never syncs the device
        return value if isinstance(value, (np.ndarray, jax.Array)) and value.size == 1 else None

    def _to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def _is_distributed_worker(self) -> bool:
        return config.jax.is_distributed and config.jax.rank != 0

    backend = "jax"

    def _backend_random_state(self) -> Any:
        # the root key stream agents and models split their keys from, as host data (a seed not yet turned into a
        # key stays the (0, seed) pair it is)
        jax_config = config.jax
        key = jax_config._key
        return {
            "key": np.asarray(jax.device_get(key), dtype=np.uint32),
            "is_key": not isinstance(key, np.ndarray),
            "initialized_models": jax_config._initialized_models,
        }

    def _set_backend_random_state(self, state: Any) -> None:
        jax_config = config.jax
        if state["is_key"]:
            with jax.default_device(jax_config.device):
                jax_config._key = jnp.asarray(state["key"])
        else:
            jax_config._key = state["key"]
        jax_config._initialized_models = state["initialized_models"]


__all__ = ["Trainer", "generate_equally_spaced_scopes"]
