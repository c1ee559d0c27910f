"""Episode statistics (torch): the buffers are tensors on the rewards' device, so recording never syncs."""

import numpy as np
import torch

from skrl_like.core import tracking


class EpisodeTracker(tracking.EpisodeTracker):
    __doc__ = tracking.EpisodeTracker.__doc__

    def _allocate(self, like: torch.Tensor, rows: int, boolean: bool) -> torch.Tensor:
        return torch.empty((rows, *like.shape), dtype=torch.bool if boolean else torch.float32, device=like.device)

    def _write_rewards(self, buffer: torch.Tensor, row: int, rewards: torch.Tensor) -> torch.Tensor:
        buffer[row].copy_(rewards)
        return buffer

    def _write_dones(
        self, buffer: torch.Tensor, row: int, terminated: torch.Tensor, truncated: torch.Tensor
    ) -> torch.Tensor:
        torch.logical_or(terminated, truncated, out=buffer[row])
        return buffer

    def _to_numpy(self, buffer: torch.Tensor) -> np.ndarray:
        return buffer.cpu().numpy()
