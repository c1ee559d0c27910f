"""Episode statistics (JAX): the buffers are host NumPy arrays, written in place."""

from typing import Any

import numpy as np

from skrl_like.core import tracking


class EpisodeTracker(tracking.EpisodeTracker):
    __doc__ = tracking.EpisodeTracker.__doc__

    def _allocate(self, like: Any, rows: int, boolean: bool) -> np.ndarray:
        return np.zeros((rows, *np.shape(like)), dtype=bool if boolean else np.float32)

    def _write_rewards(self, buffer: np.ndarray, row: int, rewards: Any) -> np.ndarray:
        buffer[row] = rewards
        return buffer

    def _write_dones(self, buffer: np.ndarray, row: int, terminated: Any, truncated: Any) -> np.ndarray:
        np.logical_or(terminated, truncated, out=buffer[row])
        return buffer

    def _to_numpy(self, buffer: np.ndarray) -> np.ndarray:
        return np.asarray(buffer)
