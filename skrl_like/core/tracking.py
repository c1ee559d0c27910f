"""Episode statistics gathered without a host sync per step.

Each step's rewards and done flags are copied into pre-allocated rows (one cheap device op each);
the statistics are computed in NumPy only when they are written (every ``write_interval`` steps).
A backend subclass (``skrl_like.{torch,jax}.agents.tracking.EpisodeTracker``) overrides the four
tensor hooks; everything else is written here once.
"""

from typing import Any, Dict, List, Tuple

import numpy as np


class EpisodeTracker:
    """Rolling record of rewards and episode ends, reduced to the base agent's TensorBoard tags.

    :param capacity: rows kept before the record is reduced (and the rows reused); bounds the memory used.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._rewards = None
        self._dones = None
        self._rows = 0
        self._returns = None  # running return and length of the episode each env is in (host side)
        self._lengths = None
        self._pending: Dict[str, List[float]] = {}

    # -- backend hooks -------------------------------------------------------------------------------------

    def _allocate(self, like: Any, rows: int, boolean: bool) -> Any:
        """A buffer of shape ``(rows, *like.shape)``, of booleans or float32, where ``like`` lives."""
        raise NotImplementedError

    def _write_row(
        self, rewards_rows: Any, done_rows: Any, row: int, rewards: Any, terminated: Any, truncated: Any
    ) -> Tuple[Any, Any]:
        """Copy one step's rewards into ``rewards_rows[row]`` and ``terminated | truncated`` into ``done_rows[row]``,
        on the device (no host read); return both buffers (a functional backend rebuilds them)."""
        raise NotImplementedError

    def _to_numpy(self, buffer: Any) -> np.ndarray:
        raise NotImplementedError

    # -- neutral logic ---------------------------------------------------------------------------------------

    def record(self, rewards: Any, terminated: Any, truncated: Any) -> None:
        """Record one step of every environment (arrays of shape ``(num_envs, 1)``)."""
        if self._rewards is None:
            self._rewards = self._allocate(rewards, self.capacity, False)
            self._dones = self._allocate(rewards, self.capacity, True)
        self._rewards, self._dones = self._write_row(
            self._rewards, self._dones, self._rows, rewards, terminated, truncated
        )
        self._rows += 1
        if self._rows == self.capacity:
            self._reduce()

    def _reduce(self) -> None:
        if not self._rows:
            return
        rewards = self._to_numpy(self._rewards)[: self._rows].reshape(self._rows, -1).astype(np.float64)
        dones = self._to_numpy(self._dones)[: self._rows].reshape(self._rows, -1).astype(bool)
        self._rows = 0
        if self._returns is None:
            self._returns = np.zeros(rewards.shape[1])
            self._lengths = np.zeros(rewards.shape[1], dtype=np.int64)
        pending = self._pending
        # one entry per step (and below, per episode) so that the mean taken at write time is exact
        pending.setdefault("Reward / Instantaneous reward (max)", []).extend(rewards.max(axis=1))
        pending.setdefault("Reward / Instantaneous reward (min)", []).extend(rewards.min(axis=1))
        pending.setdefault("Reward / Instantaneous reward (mean)", []).extend(rewards.mean(axis=1))
        finished_returns, finished_lengths = [], []
        for step_rewards, step_dones in zip(rewards, dones):
            self._returns += step_rewards
            self._lengths += 1
            if step_dones.any():
                finished_returns.extend(self._returns[step_dones])
                finished_lengths.extend(self._lengths[step_dones])
                self._returns[step_dones] = 0
                self._lengths[step_dones] = 0
        if finished_returns:
            for name, values in (
                ("Reward / Total reward", finished_returns),
                ("Episode / Total timesteps", finished_lengths),
            ):
                for reduction in ("max", "min", "mean"):
                    pending.setdefault(f"{name} ({reduction})", []).extend(values)

    def collect(self) -> Dict[str, List[float]]:
        """Reduce what was recorded since the last call and return ``{tag: [values]}`` (then forget it)."""
        self._reduce()
        pending, self._pending = self._pending, {}
        return pending
