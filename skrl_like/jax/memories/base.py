"""The JAX-backend ``Memory``: the array code under the neutral memory, with two storages.

**Host storage** (``on_device=False``): the buffers are host NumPy arrays. Writing a step (``add_samples``) is one
in-place ``buffer[memory_index] = array`` per name, with no device dispatch; JAX arrays given to it are copied to the
host once. With the ``"jax"`` backend, everything read back (``sample*``, ``get_tensor_by_name``) is put on
:attr:`Memory.device` as JAX arrays, i.e. once per update rather than once per step. ``tensors_view`` holds real
views of the buffers, and a buffer stays valid after writes (skrl's NumPy behaviour): the automatic choice on a CPU.
With NumPy inputs (the ``"numpy"`` backend) a write is a plain copy; JAX inputs cost one ``device_get`` each.

**Device storage** (``on_device=True``; the default with the ``"jax"`` backend on an accelerator): the buffers are
JAX arrays on :attr:`Memory.device`, so a transition that lives there (a GPU simulator's, by DLPack) never crosses to
the host. A step's write is one jitted call for every buffer of the call, the buffers donated (updated in place) and
the row kept on the device beside the host cursor (no transfer, no constant per step, no recompilation). Sampling
moves its row indexes to the device in one explicit transfer and gathers there. JAX arrays are immutable: a buffer
read from ``tensors`` or ``get_tensor_by_name`` is valid until the next write (it is donated to it), and
``tensors_view`` reshapes the current buffer when read (write through ``set_tensor_by_name``). Checkpoints, ``save``
and ``export`` copy to the host only when they write a file.

Cursor, layouts, mini-batch split and file layout live in :mod:`skrl_like.core.memory_index`.
"""

import functools
from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.memory_index import MemoryBase, Rows, WritePlan


def _to_host(array: Any) -> np.ndarray:
    return np.asarray(jax.device_get(array)) if isinstance(array, jax.Array) else np.asarray(array)


def device_storage_by_default(device: jax.Device) -> bool:
    """The storage of ``on_device=None``: the device with the ``"jax"`` backend when ``device`` is not a CPU. A CPU
    keeps the host storage's semantics (real views, buffers valid after writes), though with JAX inputs the device
    storage writes a step faster there too (docs/benchmarks.md)."""
    return config.jax.backend == "jax" and device.platform != "cpu"


@functools.partial(jax.jit, donate_argnums=(0, 1))
def _write_timestep(buffers: dict, row: jax.Array, samples: dict) -> Tuple[dict, jax.Array]:
    """Every ``samples[name]`` (one timestep, any shape with the buffer's number of values per timestep) into row
    ``row`` of ``buffers[name]``, in place (donated); returns the buffers and the next row (wrapping around)."""
    written = {
        name: buffer.at[row].set(samples[name].reshape(buffer.shape[1:]).astype(buffer.dtype))
        for name, buffer in buffers.items()
    }
    memory_size = next(iter(buffers.values())).shape[0]
    return written, (row + 1) % memory_size


@jax.jit
def _gather_rows(buffers: list, rows: jax.Array) -> list:
    """Rows ``rows`` of each buffer's flat view ``(memory_size * num_envs, *size)``."""
    return [buffer.reshape(-1, *buffer.shape[2:])[rows] for buffer in buffers]


@functools.partial(jax.jit, static_argnums=(1, 2))
def _slice_rows(buffers: list, start: int, stop: int) -> list:
    """Rows ``start:stop`` of each buffer's flat view (the split of ``sample_all``: a few static bounds)."""
    return [buffer.reshape(-1, *buffer.shape[2:])[start:stop] for buffer in buffers]


class _FlatViews(Mapping):
    """``tensors_view`` of a device storage: each current buffer reshaped to its flat view when read."""

    def __init__(self, tensors: dict) -> None:
        self._tensors = tensors

    def __getitem__(self, name: str) -> jax.Array:
        buffer = self._tensors[name]
        return buffer.reshape(-1, *buffer.shape[2:])

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)


class Memory(MemoryBase):
    """Base class of the JAX-backend memories: named circular buffers ``(memory_size, num_envs, size)``.

    :param memory_size: number of timesteps each buffer holds (its first axis); for on-policy agents, the rollout
        length.
    :param num_envs: number of environments written at every step (second axis).
    :param device: JAX device of the buffers (device storage) or of the arrays read back with the ``"jax"`` backend
        (host storage); ``None``: the default device.
    :param export: save the whole memory to a file every time it fills up (e.g. to build offline data sets).
    :param export_format: file format of the export: ``"npz"`` (``"np"`` is taken as ``"npz"``) or ``"csv"``;
        ``"pt"`` is accepted only without ``export`` (the JAX backend never writes torch files).
    :param export_directory: folder of the exported files (a ``memories`` sub-folder is created in it).
    :param on_device: where the buffers live: ``True`` JAX arrays on ``device`` (a step written by one jitted call,
        sampled there), ``False`` host NumPy arrays, ``None`` (default) on the device with the ``"jax"`` backend
        when ``device`` is not a CPU (a CPU keeps the host storage's NumPy semantics). See the module docstring.
    """

    _native_format_error = (
        "the JAX backend does not write or read PyTorch ('pt') memory files, so that it never needs torch: "
        "use format 'npz' (or 'csv')"
    )

    def __init__(self, *args: Any, on_device: Optional[bool] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # skrl 1.4's arguments, as MemoryBase takes them
        self.on_device = device_storage_by_default(self.device) if on_device is None else bool(on_device)
        if self.on_device:
            self.tensors_view = _FlatViews(self.tensors)
        # the device's copy of memory_index after the last jitted write, and the host value it holds (None: none
        # yet): a cursor moved otherwise (reset, a partial write, a loaded state) is put on the device again
        self._device_row: Optional[jax.Array] = None
        self._device_row_at: Optional[int] = None

    def _parse_device(self, device: Union[str, jax.Device, None]) -> jax.Device:
        return config.jax.parse_device(device)

    def _resolve_dtype(self, dtype: Any) -> np.dtype:
        return np.dtype(np.float32 if dtype is None else dtype)

    def _zeros(self, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
        if self.on_device:
            return jnp.zeros(shape, dtype=dtype, device=self.device)
        return np.zeros(shape, dtype=dtype)

    def _set_buffer(self, name: str, buffer: Any) -> None:
        if not self.on_device:
            return super()._set_buffer(name, buffer)
        setattr(self, f"_tensor_{name}", buffer)
        self.tensors[name] = buffer  # tensors_view (_FlatViews) reads it from here

    def _fill_nan(self, name: str) -> None:
        buffer = self.tensors[name]
        if not np.issubdtype(buffer.dtype, np.floating):
            return
        if self.on_device:
            self._set_buffer(name, jnp.full(buffer.shape, np.nan, dtype=buffer.dtype, device=self.device))
        else:
            buffer.fill(np.nan)

    def _write(self, name: str, target: Any, tensor: Any) -> None:
        buffer = self.tensors[name]
        if not self.on_device:
            buffer[target] = tensor if isinstance(tensor, np.ndarray) else _to_host(tensor)
        elif target is Ellipsis:  # a whole buffer (set_tensor_by_name, a loaded state): the old one may be donated
            value = tensor.astype(buffer.dtype) if isinstance(tensor, jax.Array) else np.asarray(tensor, buffer.dtype)
            self._set_buffer(name, jax.device_put(jnp.broadcast_to(value, buffer.shape), self.device))
        else:  # the rare layouts (part of a timestep, several timesteps): one out-of-place update
            self._set_buffer(name, buffer.at[target].set(jnp.asarray(tensor).astype(buffer.dtype)))

    def _write_samples(self, plan: WritePlan, samples: Mapping[str, Any]) -> None:
        (target, source), *rest = plan.pieces
        if not (self.on_device and samples and isinstance(target, int) and source is None and not rest):
            return super()._write_samples(plan, samples)
        # one whole timestep: one jitted call, the row already on the device unless the cursor moved otherwise
        if self._device_row_at != target:
            self._device_row = jax.device_put(np.int32(target), self.device)
        buffers = {name: self.tensors[name] for name in samples}
        written, self._device_row = _write_timestep(buffers, self._device_row, dict(samples))
        self._device_row_at = plan.memory_index
        for name, buffer in written.items():
            self._set_buffer(name, buffer)

    def _device_rows(self, rows: Rows) -> Any:
        if not self.on_device or isinstance(rows, slice):
            return rows
        return jax.device_put(np.asarray(rows, dtype=np.int32), self.device)  # one explicit transfer per batch

    def _gather(self, view: np.ndarray, rows: Rows) -> np.ndarray:
        return view[rows]

    def _gather_names(self, names: Sequence[str], rows: Any) -> List[Any]:
        if not self.on_device:
            return super()._gather_names(names, rows)
        buffers = [self.tensors[name] for name in names]
        if isinstance(rows, slice):
            return _slice_rows(buffers, rows.start, rows.stop)
        return _gather_rows(buffers, rows)

    def _to_numpy(self, tensor: Any) -> np.ndarray:
        return _to_host(tensor)

    def _host_indexes(self, indexes: Any) -> np.ndarray:
        return _to_host(indexes)

    def _random_starts(self, size: int, batch_size: int, replacement: bool) -> np.ndarray:
        # NumPy's global generator (seeded by set_seed), as skrl's JAX memories
        if replacement:
            return np.random.randint(0, size, (batch_size,))
        return np.random.permutation(size)[:batch_size]

    def _output(self, tensors: Any) -> Any:
        if self.on_device:  # already there; the "numpy" backend reads NumPy arrays
            return tensors if config.jax.backend == "jax" else jax.device_get(tensors)
        return jax.device_put(tensors, self.device) if config.jax.backend == "jax" else tensors
