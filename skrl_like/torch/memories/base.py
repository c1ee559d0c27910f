"""The torch ``Memory``: the tensor code (allocation, scatter, gather, ``torch.save``) under the neutral memory.

Cursor, layouts, mini-batch split and file layout live in :mod:`skrl_like.core.memory_index`; buffers are torch
tensors on :attr:`Memory.device` and their flat views share their storage.
"""

from typing import Any, Dict, Tuple, Union

import numpy as np
import torch

from skrl_like import config
from skrl_like.core.memory_index import MemoryBase, Rows


class Memory(MemoryBase):
    """Base class of the torch memories: named circular buffers ``(memory_size, num_envs, size)``.

    :param memory_size: number of timesteps kept (first axis); for on-policy agents, the number of rollouts.
    :param num_envs: number of parallel environments whose samples are stored side by side (second axis).
    :param device: where the buffers live (``None``: ``config.torch.device``'s default rule).
    :param export: save the whole memory to disk every time it fills up (useful to build offline datasets).
    :param export_format: ``"pt"`` (torch), ``"npz"`` (NumPy; ``"np"`` is accepted as an alias) or ``"csv"``.
    :param export_directory: where exported files go (a ``memories/`` subfolder is created in it).
    """

    _native_format = "pt"

    def _parse_device(self, device: Union[str, torch.device, None]) -> torch.device:
        return config.torch.parse_device(device)

    def _resolve_dtype(self, dtype: Any) -> torch.dtype:
        if dtype is None:
            return torch.get_default_dtype()
        if isinstance(dtype, torch.dtype):
            return dtype
        return torch.from_numpy(np.empty(0, dtype=dtype)).dtype

    def _zeros(self, shape: Tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(shape, dtype=dtype, device=self.device)

    def _fill_nan(self, name: str) -> None:
        if torch.is_floating_point(self.tensors[name]):
            self.tensors[name].fill_(float("nan"))

    def _write(self, name: str, target: Any, tensor: Any) -> None:
        # samples may still carry a graph: store their values only
        self.tensors[name][target].copy_(
            tensor.detach() if isinstance(tensor, torch.Tensor) else torch.as_tensor(tensor)
        )

    def _device_rows(self, rows: Rows) -> Any:
        return rows if isinstance(rows, slice) else torch.as_tensor(rows, device=self.device)

    def _gather(self, view: torch.Tensor, rows: Any) -> torch.Tensor:
        return view[rows]

    def _to_numpy(self, tensor: torch.Tensor) -> np.ndarray:
        return tensor.detach().cpu().numpy()

    def _host_indexes(self, indexes: Any) -> np.ndarray:
        return indexes.cpu().numpy() if isinstance(indexes, torch.Tensor) else np.asarray(indexes)

    def _random_starts(self, size: int, batch_size: int, replacement: bool) -> np.ndarray:
        # torch's global generator (seeded by set_seed), as skrl
        if replacement:
            return torch.randint(0, size, (batch_size,)).numpy()
        return torch.randperm(size, dtype=torch.long)[:batch_size].numpy()

    def _save_native(self, path: str, buffers: Dict[str, torch.Tensor]) -> None:
        torch.save(buffers, path)

    def _load_native(self, path: str) -> Dict[str, torch.Tensor]:
        return torch.load(path, map_location=self.device)

    def share_memory(self) -> None:
        """Move the CPU buffers to shared memory so that worker processes (``ParallelTrainer``) see the writes."""
        for tensor in self.tensors.values():
            if not tensor.is_cuda:
                tensor.share_memory_()
