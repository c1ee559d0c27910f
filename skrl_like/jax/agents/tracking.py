"""Episode statistics (JAX): the rows are where the rewards are: JAX arrays on their device, written by one compiled
function per step that keeps the row index on the device too (no transfer either way), or NumPy arrays written in
place (the ``"numpy"`` backend)."""

import functools
from typing import Any, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core import tracking


@functools.partial(jax.jit, static_argnums=(1, 2))
def _zero_rows(like: jax.Array, rows: int, dtype: Any) -> jax.Array:
    return jnp.zeros((rows, *like.shape), dtype)  # made on the device: no constant crosses from the host


@functools.partial(jax.jit, donate_argnums=(0, 1, 2))
def _write_next_row(
    rewards_rows: jax.Array, done_rows: jax.Array, row: jax.Array, rewards: Any, terminated: Any, truncated: Any
) -> Tuple[jax.Array, jax.Array, jax.Array]:
    rewards_rows = rewards_rows.at[row].set(jnp.asarray(rewards, rewards_rows.dtype))
    done_rows = done_rows.at[row].set(jnp.logical_or(terminated, truncated))
    return rewards_rows, done_rows, row + 1


@functools.partial(jax.jit, donate_argnums=(0, 1))
def _write_first_row(rewards_rows: jax.Array, done_rows: jax.Array, rewards: Any, terminated: Any, truncated: Any):
    return _write_next_row(rewards_rows, done_rows, jnp.zeros((), jnp.int32), rewards, terminated, truncated)


class EpisodeTracker(tracking.EpisodeTracker):
    __doc__ = tracking.EpisodeTracker.__doc__

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._device_row: Optional[jax.Array] = None  # the next row, on the device (JAX rows only)

    def _allocate(self, like: Any, rows: int, boolean: bool) -> Any:
        dtype = bool if boolean else np.float32
        if isinstance(like, jax.Array):
            return _zero_rows(like, rows, jnp.dtype(dtype))
        return np.zeros((rows, *np.shape(like)), dtype=dtype)

    def _write_row(
        self, rewards_rows: Any, done_rows: Any, row: int, rewards: Any, terminated: Any, truncated: Any
    ) -> Tuple[Any, Any]:
        if isinstance(rewards_rows, np.ndarray):
            rewards_rows[row] = rewards
            np.logical_or(terminated, truncated, out=done_rows[row])
            return rewards_rows, done_rows
        if row == 0:  # the host counts the rows too: a new fill starts at row 0 without sending it
            rewards_rows, done_rows, self._device_row = _write_first_row(
                rewards_rows, done_rows, rewards, terminated, truncated
            )
        else:
            rewards_rows, done_rows, self._device_row = _write_next_row(
                rewards_rows, done_rows, self._device_row, rewards, terminated, truncated
            )
        return rewards_rows, done_rows

    def _to_numpy(self, buffer: Any) -> np.ndarray:
        return np.asarray(jax.device_get(buffer))
