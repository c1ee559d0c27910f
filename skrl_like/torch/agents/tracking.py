"""Episode statistics (torch): the buffers are tensors on the rewards' device, so recording never syncs."""

from typing import Tuple

import numpy as np
import torch

from skrl_like.core import tracking


class EpisodeTracker(tracking.EpisodeTracker):
    __doc__ = tracking.EpisodeTracker.__doc__

    def _allocate(self, like: torch.Tensor, rows: int, boolean: bool) -> torch.Tensor:
        return torch.empty((rows, *like.shape), dtype=torch.bool if boolean else torch.float32, device=like.device)

    def _write_row(
        self,
        rewards_rows: torch.Tensor,
        done_rows: torch.Tensor,
        row: int,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        rewards_rows[row].copy_(rewards)
        torch.logical_or(terminated, truncated, out=done_rows[row])
        return rewards_rows, done_rows

    def _to_numpy(self, buffer: torch.Tensor) -> np.ndarray:
        return buffer.cpu().numpy()
