"""Base class of the JAX-backend memories: named circular buffers of shape ``(memory_size, num_envs, size)``.

Storage decision: the buffers are always **host NumPy arrays**, for both ``config.jax.backend`` values. Writing a
step (``add_samples``) is then one in-place ``buffer[memory_index] = array`` per name, with no device dispatch
and no allocation; JAX arrays given to it are copied to the host once (the environment needs the actions there
anyway). With the ``"jax"`` backend, everything read back (``sample*``, ``get_tensor_by_name``) is transferred
to :attr:`Memory.device` as JAX arrays, i.e. once per update rather than once per step. ``tensors`` and
``tensors_view`` hold the NumPy buffers and real views of them.
"""

import csv
import datetime
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

import gymnasium
import jax
import numpy as np

from skrl_like import config
from skrl_like._logging import logger
from skrl_like.core.spaces import compute_space_size

_EXPORT_FORMATS = ("pt", "np", "npz", "csv")
_TORCH_FORMAT_ERROR = (
    "The JAX backend does not write or read PyTorch ('pt') memory files, so that it never needs torch: "
    "use format 'npz' (or 'csv')"
)


def _to_host(array: Any) -> np.ndarray:
    return np.asarray(jax.device_get(array)) if isinstance(array, jax.Array) else np.asarray(array)


class Memory:
    """Base class of memories: named circular buffers indexed by time and environment.

    :param memory_size: number of timesteps each buffer holds (its first axis); for on-policy agents, the rollout
        length.
    :param num_envs: number of environments written at every step (second axis).
    :param device: JAX device the arrays read back are put on with the ``"jax"`` backend (``None``: default).
    :param export: save the whole memory to a file every time it fills up (e.g. to build offline data sets).
    :param export_format: file format of the export: ``"npz"`` (``"np"`` is taken as ``"npz"``) or ``"csv"``;
        ``"pt"`` is accepted only without ``export`` (the JAX backend never writes torch files).
    :param export_directory: folder of the exported files (a ``memories`` sub-folder is created in it).
    """

    def __init__(
        self,
        memory_size: int,
        num_envs: int = 1,
        device: Union[str, jax.Device, None] = None,
        export: bool = False,
        export_format: str = "pt",
        export_directory: str = "",
    ) -> None:
        self.memory_size = memory_size
        self.num_envs = num_envs
        self.device = config.jax.parse_device(device)
        self._jax = config.jax.backend == "jax"

        self.filled = False
        self.env_index = 0
        self.memory_index = 0

        self.tensors: dict = {}
        self.tensors_view: dict = {}
        self.tensors_keep_dimensions: dict = {}
        self.sampling_indexes: Any = None
        # flattened rows ordered environment-major (all timesteps of env 0, then env 1, ...) for sequences
        self.all_sequence_indexes = np.concatenate(
            [np.arange(i, memory_size * num_envs + i, num_envs) for i in range(num_envs)]
        )

        if export_format not in _EXPORT_FORMATS:
            raise ValueError(f"Export format not supported ({export_format}): use 'npz' or 'csv'")
        if export and export_format == "pt":
            raise ValueError(_TORCH_FORMAT_ERROR)
        self.export = export
        self.export_format = export_format
        self.export_directory = export_directory

    def __len__(self) -> int:
        """Number of samples stored (every row once the memory has wrapped around)."""
        return self.memory_size * self.num_envs if self.filled else self.memory_index * self.num_envs + self.env_index

    def _output(self, arrays: Any) -> Any:
        return jax.device_put(arrays, self.device) if self._jax else arrays

    def share_memory(self) -> None:
        """No-op: JAX-backend memories are never shared between processes."""

    def get_tensor_names(self) -> Tuple[str, ...]:
        """Sorted names of the buffers."""
        return tuple(sorted(self.tensors.keys()))

    def get_tensor_by_name(self, name: str, keepdim: bool = True) -> Any:
        """A buffer, ``(memory_size, num_envs, size)`` with ``keepdim`` else flattened to ``(-1, size)``.

        :raises KeyError: no buffer has that name.
        """
        return self._output(self.tensors[name] if keepdim else self.tensors_view[name])

    def set_tensor_by_name(self, name: str, tensor: Any) -> None:
        """Overwrite a whole buffer with ``tensor`` (same shape), in place."""
        np.copyto(self.tensors[name], _to_host(tensor).reshape(self.tensors[name].shape))

    def create_tensor(
        self,
        name: str,
        size: Union[int, Sequence[int], gymnasium.Space],
        dtype: Optional[Any] = None,
        keep_dimensions: bool = False,
    ) -> bool:
        """Create a buffer ``(memory_size, num_envs, size)``; ``False`` if one with that name already exists.

        :param name: buffer name (what agents pass to ``add_samples`` and ``sample``).
        :param size: an int, a shape, or a gymnasium space (stored as its occupied size: ``Discrete`` takes 1).
        :param dtype: NumPy/JAX dtype (``None``: float32).
        :param keep_dimensions: keep ``size`` as a multi-dimensional shape instead of flattening it.
        :raises ValueError: a buffer with that name exists with another size or dtype.
        """
        if keep_dimensions:
            if isinstance(size, gymnasium.spaces.Box):
                shape: Tuple[int, ...] = tuple(size.shape)
            elif isinstance(size, (list, tuple)):
                shape = tuple(int(value) for value in size)
            else:
                shape = (compute_space_size(size, occupied_size=True),)
        else:
            shape = (compute_space_size(size, occupied_size=True),)
        if name in self.tensors:
            existing = self.tensors[name]
            if existing.shape[-1] != shape[-1]:
                raise ValueError(
                    f"Size of tensor {name} ({shape}) doesn't match the existing one ({existing.shape[2:]})"
                )
            if dtype is not None and existing.dtype != np.dtype(dtype):
                raise ValueError(f"Dtype of tensor {name} ({dtype}) doesn't match the existing one ({existing.dtype})")
            return False
        buffer = np.zeros(
            (self.memory_size, self.num_envs, *shape), dtype=np.dtype(np.float32 if dtype is None else dtype)
        )
        setattr(self, f"_tensor_{name}", buffer)
        self.tensors[name] = buffer
        self.tensors_view[name] = buffer.reshape(-1, *shape)  # a view: rows t * num_envs + e
        self.tensors_keep_dimensions[name] = shape if keep_dimensions else None
        # unwritten rows are NaN so that reading them by mistake is visible (every float buffer, as skrl does)
        for tensor in self.tensors.values():
            if np.issubdtype(tensor.dtype, np.floating):
                tensor.fill(np.nan)
        return True

    def reset(self) -> None:
        """Start writing from the first row again (the data is kept, but ``len`` is 0)."""
        self.filled = False
        self.env_index = 0
        self.memory_index = 0

    def add_samples(self, **tensors: Any) -> None:
        """Write one step (or part of one) into the buffers; names without a buffer are ignored.

        Accepted layouts, decided from ``states`` (or the first array): ``(num_envs, size)`` full batch, ``(n, size)``
        with ``n < num_envs`` (fills the next environment slots), ``(n, size)`` with ``num_envs == 1`` (``n``
        consecutive timesteps, wrapping around), or ``(size,)`` (one environment slot).
        """
        if not tensors:
            raise ValueError(
                "No samples to be recorded in memory: pass them as keyword arguments (name=array), "
                "e.g. memory.add_samples(states=states, actions=actions)"
            )
        reference = tensors.get("states", next(iter(tensors.values())))
        dim, shape = reference.ndim, reference.shape
        if dim > 1 and shape[0] == self.num_envs:
            for name, tensor in tensors.items():
                buffer = self.tensors.get(name)
                if buffer is not None:
                    buffer[self.memory_index] = tensor
            self.memory_index += 1
        elif dim > 1 and shape[0] < self.num_envs:
            stop = self.env_index + shape[0]
            for name, tensor in tensors.items():
                buffer = self.tensors.get(name)
                if buffer is not None:
                    buffer[self.memory_index, self.env_index : stop] = tensor
            self.env_index = stop
        elif dim > 1 and self.num_envs == 1:
            self._add_timesteps(tensors, shape[0])
        elif dim == 1:
            for name, tensor in tensors.items():
                buffer = self.tensors.get(name)
                if buffer is not None:
                    buffer[self.memory_index, self.env_index] = tensor
            self.env_index += 1
        else:
            raise ValueError(f"Expected shape (number of environments = {self.num_envs}, data size), got {shape}")

        if self.env_index >= self.num_envs:
            self.env_index = 0
            self.memory_index += 1
        if self.memory_index >= self.memory_size:
            self.memory_index = 0
            self.filled = True
            if self.export:
                self.save(directory=self.export_directory, format=self.export_format)

    def _add_timesteps(self, tensors: dict, count: int) -> None:
        # one environment, `count` consecutive timesteps: the target rows are the same for every name
        if count > self.memory_size:
            raise ValueError(f"Cannot add {count} timesteps at once to a memory of size {self.memory_size}")
        head = min(count, self.memory_size - self.memory_index)
        for name, tensor in tensors.items():
            buffer = self.tensors.get(name)
            if buffer is not None:
                buffer[self.memory_index : self.memory_index + head, 0] = tensor[:head]
                buffer[: count - head, 0] = tensor[head:]
        if head < count:
            self.memory_index = count - head
            self.filled = True
        else:
            self.memory_index += head

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[Any]]:
        """Draw samples (implemented by subclasses)."""
        raise NotImplementedError("The sampling method (.sample()) is not implemented")

    def sample_by_index(self, names: Sequence[str], indexes: Any, mini_batches: int = 1) -> List[List[Any]]:
        """Rows ``indexes`` of the flattened buffers: one list (one array per name) per mini-batch.

        :param names: buffer names, in the order the arrays are returned.
        :param indexes: flattened row indexes (row ``t * num_envs + e``).
        :param mini_batches: split ``indexes`` into this many chunks with ``numpy.array_split``.
        """
        indexes = _to_host(indexes)
        batches = np.array_split(indexes, mini_batches) if mini_batches > 1 else [indexes]
        return self._output([[self.tensors_view[name][batch] for name in names] for batch in batches])

    def sample_all(self, names: Sequence[str], mini_batches: int = 1, sequence_length: int = 1) -> List[List[Any]]:
        """The whole memory (unwritten rows included), in order.

        :param names: buffer names, in the order the arrays are returned.
        :param mini_batches: split the rows into this many contiguous chunks with ``numpy.array_split`` (no row is
            dropped; sizes differ by at most one).
        :param sequence_length: ``> 1`` orders the rows environment-major (each environment's timesteps together).
        """
        if sequence_length > 1:
            return self.sample_by_index(names, self.all_sequence_indexes, mini_batches)
        if mini_batches > 1:
            rows = self.memory_size * self.num_envs
            bounds = [
                (chunk[0], chunk[-1] + 1) for chunk in np.array_split(np.arange(rows), mini_batches) if len(chunk)
            ]
            return self._output([[self.tensors_view[name][start:stop] for name in names] for start, stop in bounds])
        return self._output([[self.tensors_view[name] for name in names]])

    def get_sampling_indexes(self) -> Any:
        """Indexes used by the last ``sample`` call."""
        return self.sampling_indexes

    def save(self, directory: str = "", format: str = "pt") -> None:
        """Write the memory to ``<directory>/memories/<timestamp>_memory_<id>.<format>``.

        :param directory: target folder (empty: ``export_directory``).
        :param format: ``"npz"`` (all buffers ``(memory_size, num_envs, size)``) or ``"csv"`` (``len(memory)`` rows,
            columns ``<name>.<index>`` in sorted name order; appended if the file exists).
        """
        if format == "np":
            format = "npz"
        if format == "pt":
            raise ValueError(_TORCH_FORMAT_ERROR)
        if format not in ("npz", "csv"):
            raise ValueError(f"Unsupported format: {format}. Available formats: npz, csv")
        directory = directory or self.export_directory
        os.makedirs(os.path.join(directory, "memories"), exist_ok=True)
        timestamp = datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f")
        path = os.path.join(directory, "memories", f"{timestamp}_memory_{hex(id(self))}.{format}")
        names = self.get_tensor_names()
        if format == "npz":
            np.savez(path, **{name: self.tensors[name] for name in names})
            return
        rows = len(self)
        columns = [self.tensors_view[name][:rows].reshape(rows, -1) for name in names]
        with open(path, "a", newline="") as file:
            writer = csv.writer(file)
            writer.writerow([f"{name}.{i}" for name, column in zip(names, columns) for i in range(column.shape[1])])
            for row in range(rows):
                writer.writerow([value for column in columns for value in column[row].tolist()])

    def load(self, path: str) -> None:
        """Copy a saved memory (``.npz``) into the existing buffers (same names and shapes required).

        :raises ValueError: unknown extension, ``.pt`` file, or a stored array whose shape differs from its buffer.
        """
        if path.endswith(".pt"):
            raise ValueError(_TORCH_FORMAT_ERROR)
        if path.endswith(".csv"):
            raise NotImplementedError("Loading a CSV memory file is not supported: save the memory as 'npz'")
        if not path.endswith(".npz"):
            raise ValueError(f"Unsupported memory file {path}: use a '.npz' file")
        with np.load(path) as data:
            for name in data.files:
                if name not in self.tensors:
                    logger.warning(f"Memory file {path} has tensor '{name}', which this memory lacks: skipped")
                    continue
                array = data[name]
                if array.shape != self.tensors[name].shape:
                    raise ValueError(
                        f"Tensor '{name}' in {path} has shape {array.shape}, but the memory's has shape "
                        f"{self.tensors[name].shape}: create the memory with the same memory_size/num_envs/size"
                    )
                # in place: `tensors`, `tensors_view` and the `_tensor_<name>` attributes all see the loaded data
                np.copyto(self.tensors[name], array, casting="same_kind")
