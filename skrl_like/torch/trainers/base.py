"""The torch ``Trainer`` base: overrides only the tensor hooks of the neutral ``TrainerCore`` (no-grad, stacking)."""

from typing import Any, List

import torch

from skrl_like import config
from skrl_like.core.trainer import TrainerCore, generate_equally_spaced_scopes


class Trainer(TrainerCore):
    __doc__ = TrainerCore.__doc__

    def _no_grad(self) -> Any:
        return torch.no_grad()

    def _stack(self, arrays: List[torch.Tensor]) -> torch.Tensor:
        return torch.vstack(arrays)

    def _info_scalar(self, value: Any) -> Any:
        # kept as a tensor: it is converted when written, so logging never syncs the device
        return value if isinstance(value, torch.Tensor) and value.numel() == 1 else None

    def _to_numpy(self, array: torch.Tensor) -> Any:
        return array.detach().cpu().numpy()

    def _is_distributed_worker(self) -> bool:
        return config.torch.is_distributed and config.torch.rank != 0

    backend = "torch"

    def _backend_random_state(self) -> Any:
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
        return {"cpu": torch.get_rng_state(), "cuda": cuda}

    def _set_backend_random_state(self, state: Any) -> None:
        torch.set_rng_state(state["cpu"])
        if state["cuda"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda"])


__all__ = ["Trainer", "generate_equally_spaced_scopes"]
