"""The torch ``Memory``: named circular buffers of shape ``(memory_size, num_envs, size)``.

Each buffer also has a flat view ``(memory_size * num_envs, size)`` whose row ``r = t * num_envs + e`` holds the
sample of environment ``e`` at time ``t``; sampling indexes that view.
"""

import csv
import datetime
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import gymnasium
import numpy as np
import torch

from skrl_like import config
from skrl_like.core.spaces import compute_space_size

# "np" is what skrl 1.4.3 validates but cannot save; "npz" is what it saves but rejects: accept both
_EXPORT_FORMATS = {"pt": "pt", "np": "npz", "npz": "npz", "csv": "csv"}


class Memory:
    """Base class of the memories: storage, indexing, export; subclasses choose how to sample.

    :param memory_size: number of timesteps kept (first axis); for on-policy agents, the number of rollouts.
    :param num_envs: number of parallel environments whose samples are stored side by side (second axis).
    :param device: where the buffers live (``None``: ``config.torch.device``'s default rule).
    :param export: save the whole memory to disk every time it fills up (useful to build offline datasets).
    :param export_format: ``"pt"`` (torch), ``"npz"`` (NumPy; ``"np"`` is accepted as an alias) or ``"csv"``.
    :param export_directory: where exported files go (a ``memories/`` subfolder is created in it).
    """

    def __init__(
        self,
        memory_size: int,
        num_envs: int = 1,
        device: Union[str, torch.device, None] = None,
        export: bool = False,
        export_format: str = "pt",
        export_directory: str = "",
    ) -> None:
        if export_format not in _EXPORT_FORMATS:
            raise ValueError(
                f"Memory: unsupported export format {export_format!r}: use one of 'pt', 'npz' ('np') or 'csv'"
            )
        if memory_size < 1 or num_envs < 1:
            raise ValueError(f"Memory: memory_size ({memory_size}) and num_envs ({num_envs}) must be at least 1")
        self.memory_size = int(memory_size)
        self.num_envs = int(num_envs)
        self.device = config.torch.parse_device(device)

        self.filled = False
        self.env_index = 0
        self.memory_index = 0

        self.tensors: Dict[str, torch.Tensor] = {}
        self.tensors_view: Dict[str, torch.Tensor] = {}
        self.tensors_keep_dimensions: Dict[str, bool] = {}

        self.sampling_indexes: Any = None
        # env-major order (all timesteps of env 0, then env 1, ...) so that consecutive rows form sequences
        self.all_sequence_indexes = np.concatenate(
            [np.arange(env, self.memory_size * self.num_envs + env, self.num_envs) for env in range(self.num_envs)]
        )

        self.export = export
        self.export_format = _EXPORT_FORMATS[export_format]
        self.export_directory = export_directory

    def __len__(self) -> int:
        """Number of samples stored (all of them once the memory has wrapped around)."""
        if self.filled:
            return self.memory_size * self.num_envs
        return self.memory_index * self.num_envs + self.env_index

    def share_memory(self) -> None:
        """Move the CPU buffers to shared memory so that worker processes (``ParallelTrainer``) see the writes."""
        for tensor in self.tensors.values():
            if not tensor.is_cuda:
                tensor.share_memory_()

    def get_tensor_names(self) -> Tuple[str, ...]:
        """Sorted names of the buffers."""
        return tuple(sorted(self.tensors.keys()))

    def get_tensor_by_name(self, name: str, keepdim: bool = True) -> torch.Tensor:
        """The buffer ``(memory_size, num_envs, size)`` (``keepdim=True``) or its flat view."""
        if name not in self.tensors:
            raise KeyError(f"Memory has no tensor named {name!r} (it has {sorted(self.tensors)}): call create_tensor")
        return self.tensors[name] if keepdim else self.tensors_view[name]

    def set_tensor_by_name(self, name: str, tensor: torch.Tensor) -> None:
        """Overwrite a whole buffer in place (views and samplers keep seeing the same storage)."""
        with torch.no_grad():
            self.get_tensor_by_name(name).copy_(tensor)

    def create_tensor(
        self,
        name: str,
        size: Union[int, Sequence[int], gymnasium.Space],
        dtype: Optional[torch.dtype] = None,
        keep_dimensions: bool = False,
    ) -> bool:
        """Create a buffer; return ``False`` if one with that name (and a compatible size and dtype) exists.

        :param name: key used by ``add_samples`` and the samplers.
        :param size: an int, a shape or a gymnasium space (stored flat with its occupied size, e.g. 1 per
            ``Discrete``, unless ``keep_dimensions``).
        :param dtype: buffer dtype (torch's default dtype when ``None``).
        :param keep_dimensions: keep the shape of ``size`` instead of flattening it (e.g. images).
        """
        if keep_dimensions:
            if isinstance(size, gymnasium.Space):
                shape = tuple(size.shape) if size.shape else (compute_space_size(size, occupied_size=True),)
            elif isinstance(size, (int, np.integer)):
                shape = (int(size),)
            else:
                shape = tuple(int(dimension) for dimension in size)
        else:
            shape = (compute_space_size(size, occupied_size=True),)

        if name in self.tensors:
            existing = self.tensors[name]
            if existing.shape[-1] != shape[-1]:
                raise ValueError(
                    f"Memory: tensor {name!r} already exists with size {existing.shape[-1]}, requested {shape[-1]}"
                )
            if dtype is not None and existing.dtype != dtype:
                raise ValueError(
                    f"Memory: tensor {name!r} already exists with dtype {existing.dtype}, requested {dtype}"
                )
            return False

        buffer = torch.zeros(
            (self.memory_size, self.num_envs, *shape), dtype=dtype or torch.get_default_dtype(), device=self.device
        )
        setattr(self, f"_tensor_{name}", buffer)
        self.tensors[name] = buffer
        self.tensors_view[name] = buffer.view(-1, *shape)
        self.tensors_keep_dimensions[name] = keep_dimensions
        # [compat] unwritten rows read as NaN, in every float buffer (skrl re-fills them all on each creation)
        for tensor in self.tensors.values():
            if torch.is_floating_point(tensor):
                tensor.fill_(float("nan"))
        return True

    def reset(self) -> None:
        """Start writing from the beginning again (the data stays until overwritten)."""
        self.filled = False
        self.env_index = 0
        self.memory_index = 0

    def _mismatch(self, name: str, tensor: torch.Tensor, expected: Sequence[int]) -> ValueError:
        return ValueError(
            f"Memory.add_samples: tensor {name!r} has shape {tuple(tensor.shape)} but the memory expects "
            f"{tuple(expected)} (num_envs={self.num_envs}, size={tuple(self.tensors[name].shape[2:])}): "
            "give one row per environment"
        )

    def _conform(self, name: str, tensor: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
        # called only when the shapes differ: accept a pure reshape (e.g. (N,) into (N, 1)), reject the rest
        if tensor.numel() != int(np.prod(shape)) or (tensor.dim() and shape and tensor.shape[0] != shape[0]):
            raise self._mismatch(name, tensor, shape)
        return tensor.reshape(shape)

    def add_samples(self, **tensors: torch.Tensor) -> None:
        """Write one step of samples (``name=tensor``; names without a buffer are ignored).

        Shapes (``n`` = leading size of ``states``, or of the first tensor when there is no ``states``):
        ``(num_envs, size)`` writes a full timestep; ``(n < num_envs, size)`` fills the next ``n`` environment
        slots; with ``num_envs == 1``, ``(n > 1, size)`` writes ``n`` consecutive timesteps (wrapping around);
        ``(size,)`` writes a single environment slot.
        """
        if not tensors:
            raise ValueError("Memory.add_samples: no tensors given: pass them as keywords, e.g. states=...")
        reference = tensors.get("states")
        if reference is None:
            reference = next(iter(tensors.values()))
        dimensions = reference.dim()
        count = reference.shape[0] if dimensions else 0
        buffers = self.tensors

        if dimensions > 1 and count == self.num_envs:
            # hot path (one call per environment step): one in-place copy per tensor, nothing allocated
            for name, tensor in tensors.items():
                buffer = buffers.get(name)
                if buffer is not None:
                    row = buffer[self.memory_index]
                    if tensor.shape != row.shape:
                        tensor = self._conform(name, tensor, row.shape)
                    row.copy_(tensor)
            self.memory_index += 1
        elif dimensions > 1 and count < self.num_envs:
            end = self.env_index + count
            if end > self.num_envs:
                raise ValueError(
                    f"Memory.add_samples: {count} samples from environment slot {self.env_index} exceed "
                    f"num_envs={self.num_envs}: complete the current timestep first"
                )
            for name, tensor in tensors.items():
                buffer = buffers.get(name)
                if buffer is not None:
                    rows = buffer[self.memory_index, self.env_index : end]
                    rows.copy_(tensor if tensor.shape == rows.shape else self._conform(name, tensor, rows.shape))
            self.env_index = end
        elif dimensions > 1 and self.num_envs == 1:
            self._add_many_samples(tensors, count)
            return
        elif dimensions == 1:
            for name, tensor in tensors.items():
                buffer = buffers.get(name)
                if buffer is not None:
                    slot = buffer[self.memory_index, self.env_index]
                    slot.copy_(tensor if tensor.shape == slot.shape else self._conform(name, tensor, slot.shape))
            self.env_index += 1
        else:
            name = "states" if "states" in tensors else next(iter(tensors))
            raise ValueError(
                f"Memory.add_samples: tensor {name!r} has shape {tuple(reference.shape)} but the memory expects "
                f"(num_envs={self.num_envs}, size): give one row per environment"
            )

        if self.env_index >= self.num_envs:
            self.env_index = 0
            self.memory_index += 1
        if self.memory_index >= self.memory_size:
            self._wrap_around()

    def _add_many_samples(self, tensors: Dict[str, torch.Tensor], count: int) -> None:
        # [fix] the target rows are computed once for all tensors, and a wrap always marks the memory as filled
        start = self.memory_index
        skipped = max(0, count - self.memory_size)  # more samples than rows: only the last memory_size survive
        kept = count - skipped
        start = (start + skipped) % self.memory_size
        first = min(kept, self.memory_size - start)
        for name, tensor in tensors.items():
            buffer = self.tensors.get(name)
            if buffer is None:
                continue
            shape = (count, *buffer.shape[2:])
            if tuple(tensor.shape) != shape:
                tensor = self._conform(name, tensor, shape)
            tensor = tensor[skipped:]
            buffer[start : start + first, 0].copy_(tensor[:first])
            if kept > first:
                buffer[: kept - first, 0].copy_(tensor[first:])
        wrapped = self.memory_index + count >= self.memory_size
        self.memory_index = (self.memory_index + count) % self.memory_size
        if wrapped:
            self._wrap_around(reset_index=False)

    def _wrap_around(self, reset_index: bool = True) -> None:
        if reset_index:
            self.memory_index = 0
        self.filled = True
        if self.export:
            self.save(directory=self.export_directory, format=self.export_format)

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[torch.Tensor]]:
        """Draw a batch of samples (defined by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement sample(): use RandomMemory")

    def sample_by_index(
        self, names: Sequence[str], indexes: Union[torch.Tensor, np.ndarray, Sequence[int]], mini_batches: int = 1
    ) -> List[List[torch.Tensor]]:
        """Rows ``indexes`` of each named flat view; with ``mini_batches > 1`` the indexes are split in order."""
        if mini_batches > 1:
            if isinstance(indexes, torch.Tensor):
                batches: Sequence[Any] = torch.tensor_split(indexes, mini_batches)
            else:
                batches = np.array_split(np.asarray(indexes), mini_batches)
            return [[self.tensors_view[name][batch] for name in names] for batch in batches]
        return [[self.tensors_view[name][indexes] for name in names]]

    def sample_all(
        self, names: Sequence[str], mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[torch.Tensor]]:
        """The whole memory (unfilled rows included), optionally as contiguous mini-batches.

        With ``sequence_length > 1`` rows come env-major (each env's timesteps in order) so RNN sequences stay
        contiguous. Otherwise mini-batches are unshuffled contiguous slices of ``(memory_size * num_envs) //
        mini_batches`` rows; the remainder rows are dropped [compat].
        """
        if sequence_length > 1:
            if mini_batches > 1:
                batches = np.array_split(self.all_sequence_indexes, mini_batches)
                return [[self.tensors_view[name][batch] for name in names] for batch in batches]
            return [[self.tensors_view[name][self.all_sequence_indexes] for name in names]]
        if mini_batches > 1:
            batch_size = (self.memory_size * self.num_envs) // mini_batches
            return [
                [self.tensors_view[name][start : start + batch_size] for name in names]
                for start in range(0, batch_size * mini_batches, batch_size)
            ]
        return [[self.tensors_view[name] for name in names]]

    def get_sampling_indexes(self) -> Any:
        """Indexes used by the last ``sample`` call."""
        return self.sampling_indexes

    def save(self, directory: str = "", format: str = "pt") -> None:
        """Write the memory to ``<directory>/memories/<timestamp>_memory_<id>.<format>``.

        :param directory: target folder (``export_directory`` when empty).
        :param format: ``"pt"`` and ``"npz"`` store the full buffers; ``"csv"`` stores the ``len(memory)`` filled
            rows of the flat views, one column per scalar (``<name>.<i>``).
        """
        format = _EXPORT_FORMATS.get(format, format)
        if format not in ("pt", "npz", "csv"):
            raise ValueError(f"Memory.save: unsupported format {format!r}: use 'pt', 'npz' or 'csv'")
        directory = directory or self.export_directory
        os.makedirs(os.path.join(directory, "memories"), exist_ok=True)
        timestamp = datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f")
        path = os.path.join(directory, "memories", f"{timestamp}_memory_{hex(id(self))}.{format}")
        names = self.get_tensor_names()

        if format == "pt":
            torch.save({name: self.tensors[name] for name in names}, path)
        elif format == "npz":
            np.savez(path, **{name: self.tensors[name].cpu().numpy() for name in names})
        else:
            rows = len(self)
            columns = [self.tensors_view[name][:rows].reshape(rows, -1).cpu().numpy() for name in names]
            with open(path, "a", newline="") as file:
                writer = csv.writer(file)
                writer.writerow(
                    [f"{name}.{index}" for name, values in zip(names, columns) for index in range(values.shape[1])]
                )
                for row in range(rows):
                    writer.writerow([item for values in columns for item in values[row].tolist()])

    def load(self, path: str) -> None:
        """Copy the buffers saved in a ``.pt`` or ``.npz`` file into this memory.

        Existing buffers must have the saved shapes (``ValueError`` otherwise) and are overwritten in place, so
        views and samplers see the loaded data; buffers the memory lacks are created. Write indexes are unchanged.
        """
        if path.endswith(".pt"):
            data = torch.load(path, map_location=self.device)
        elif path.endswith(".npz"):
            archive = np.load(path)
            data = {name: torch.from_numpy(archive[name]) for name in archive.files}
        elif path.endswith(".csv"):
            raise NotImplementedError("Memory.load: loading CSV files is not implemented: save as 'pt' or 'npz'")
        else:
            raise ValueError(f"Memory.load: unsupported file {path!r}: give a '.pt' or '.npz' file")

        for name, tensor in data.items():
            if name in self.tensors:
                if tuple(tensor.shape) != tuple(self.tensors[name].shape):
                    raise ValueError(
                        f"Memory.load: tensor {name!r} in {path} has shape {tuple(tensor.shape)} but the memory's "
                        f"buffer has {tuple(self.tensors[name].shape)}: create the memory with the same "
                        "memory_size, num_envs and sizes"
                    )
                self.tensors[name].copy_(tensor)
                continue
            if tuple(tensor.shape[:2]) != (self.memory_size, self.num_envs):
                raise ValueError(
                    f"Memory.load: tensor {name!r} in {path} has shape {tuple(tensor.shape)}, which does not start "
                    f"with (memory_size={self.memory_size}, num_envs={self.num_envs})"
                )
            buffer = tensor.to(self.device).clone()
            setattr(self, f"_tensor_{name}", buffer)
            self.tensors[name] = buffer
            self.tensors_view[name] = buffer.view(-1, *buffer.shape[2:])
            self.tensors_keep_dimensions[name] = buffer.dim() > 3
