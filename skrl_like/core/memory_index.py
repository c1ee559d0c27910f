"""The memory bookkeeping, written once for both backends.

:class:`MemoryIndex` is the pure index of a memory of ``memory_size`` timesteps x ``num_envs`` environments: the
write cursor (``memory_index``, ``env_index``), the ``filled`` flag and the wrap-around, which buffer rows an
``add_samples`` call writes, the mini-batch split, the sequence (RNN) orders and the uniform-sampling arithmetic.
It holds no tensor. :class:`MemoryBase` builds the public ``Memory`` API on it (``create_tensor``,
``add_samples``, ``sample_all``, ``sample_by_index``, ``save``/``load`` and their file layouts); a backend's
``Memory`` subclasses it and overrides only the tensor hooks (allocate, NaN-fill, scatter, gather, conversion
to NumPy, its random generator, its native file format).

Layout: a buffer is ``(memory_size, num_envs, *size)``; its flat view ``(memory_size * num_envs, *size)`` holds
environment ``e`` at time ``t`` in row ``t * num_envs + e``; every row index below is a row of that view.

One behaviour where skrl 1.4.3's two backends differ (see the spec, section 1.1 and quirks 2 and 5):

* **Mini-batch split.** Every split (``sample_all``, ``sample_by_index``, sequences, ``RandomMemory.sample``)
  is ``numpy.array_split`` of the rows in order: no row is dropped and the first ``rows % mini_batches``
  mini-batches are one row longer (5 rows in 2 mini-batches: 3 then 2). skrl's torch ``sample_all`` instead
  returns ``rows // mini_batches`` rows per mini-batch and drops the remainder ([2, 2]); its JAX ``sample_all``,
  its sequence split and both ``sample_by_index`` use ``array_split`` already, and a sampler named "all" should
  not lose data. More mini-batches than rows is a ``ValueError`` (an empty mini-batch is an update on nothing).
* **More timesteps than rows, one environment.** With ``num_envs == 1`` an ``(n, size)`` tensor is ``n``
  consecutive timesteps written from ``memory_index`` on, wrapping around (skrl's torch behaviour; its JAX
  backend raises ``NotImplementedError``). The rows are computed once for every tensor of the call and any
  wrap sets ``filled`` (the spec's [1.4.3-bug, fix]); with ``n > memory_size`` only the last ``memory_size``
  samples remain, each in the row it would have reached written one at a time; ``memory_index`` ends at
  ``(memory_index + n) % memory_size``. A wrap exports the memory once per call, however many times it wrapped.
* **Partial batches.** ``(n < num_envs, size)`` fills the next ``n`` environment slots in both backends (skrl's
  JAX backend raises); more than the slots left in the timestep is a ``ValueError``.
* ``get_tensor_names()`` is a sorted list; ``RandomMemory.sample`` records its row indexes (``sampling_indexes``)
  as a NumPy array and accepts ``sequence_length`` in both backends; ``load`` creates the buffers the memory
  lacks (with the saved dtype and shape) in both backends.
"""

import csv
import datetime
import functools
import math
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import gymnasium
import numpy as np

from skrl_like.core.spaces import compute_space_size

# "np" is what skrl 1.4.3 validates but cannot save; "npz" is what it saves but rejects: accept both
EXPORT_FORMATS = {"pt": "pt", "np": "npz", "npz": "npz", "csv": "csv"}

Rows = Union[slice, np.ndarray]


class WritePlan(NamedTuple):
    """Where one ``add_samples`` call writes, and the cursor after it.

    :param leading_shape: the shape every tensor of the call must have before the buffer's item shape.
    :param pieces: ``(target, source)`` pairs: ``buffer[target] = tensor[source]`` (the whole tensor when
        ``source`` is ``None``).
    :param memory_index: ``memory_index`` after the write.
    :param env_index: ``env_index`` after the write.
    :param wrapped: the write reached the end of the buffers (the memory is then ``filled``).
    """

    leading_shape: Tuple[int, ...]
    pieces: Tuple[Tuple[Any, Any], ...]
    memory_index: int
    env_index: int
    wrapped: bool


def split_rows(rows: np.ndarray, mini_batches: int) -> List[np.ndarray]:
    """``rows`` in order, in ``mini_batches`` chunks whose sizes differ by one at most (the longer ones first).

    :raises ValueError: fewer rows than mini-batches, or ``mini_batches < 1``.
    """
    if mini_batches == 1:
        return [rows]
    _check_mini_batches(len(rows), mini_batches)
    return np.array_split(rows, mini_batches)


def split_range(count: int, mini_batches: int) -> List[slice]:
    """The same split as :func:`split_rows` of ``arange(count)``, as contiguous slices (views, not copies)."""
    _check_mini_batches(count, mini_batches)
    size, longer = divmod(count, mini_batches)
    bounds = np.cumsum([0] + [size + (batch < longer) for batch in range(mini_batches)])
    return [slice(int(start), int(stop)) for start, stop in zip(bounds[:-1], bounds[1:])]


def _check_mini_batches(count: int, mini_batches: int) -> None:
    if mini_batches < 1 or (mini_batches > 1 and mini_batches > count):
        raise ValueError(
            f"Memory: cannot split {count} rows into {mini_batches} mini-batches: use between 1 and {max(count, 1)} "
            "mini-batches (or sample more rows)"
        )


def conformed_shape(name: str, shape: Tuple[int, ...], expected: Tuple[int, ...]) -> Optional[Tuple[int, ...]]:
    """``None`` if a tensor of ``shape`` can be written where ``expected`` is, ``expected`` if it needs a reshape
    first (same number of values and the same leading size, e.g. ``(N,)`` into ``(N, 1)``).

    :raises ValueError: any other shape (the message names the tensor).
    """
    if shape == expected:
        return None
    if math.prod(shape) == math.prod(expected) and (not shape or not expected or shape[0] == expected[0]):
        return expected
    raise ValueError(
        f"Memory.add_samples: tensor {name!r} has shape {shape} but the memory expects {expected}: give one row per "
        "environment with the size the tensor was created with (create_tensor)"
    )


def _positive_count(name: str, value: Any, meaning: str) -> int:
    """``value`` as an ``int`` >= 1: an int, a NumPy integer or a float with no fraction (``1e5`` computed or read
    from a file); a fraction, a string or a bool is refused (a silent ``int(200.7)`` would keep 200)."""
    whole = isinstance(value, (int, np.integer)) or (
        isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer()
    )
    if isinstance(value, (bool, np.bool_)) or not whole:
        raise ValueError(
            f"Memory: {name} must be a whole number, got {value!r} ({type(value).__name__}): give {meaning} as an "
            f"int, e.g. {name}={_example_count(value)}"
        )
    if value < 1:
        raise ValueError(f"Memory: {name} ({value}) must be at least 1: give {meaning}")
    return int(value)


def _example_count(value: Any) -> int:
    """The whole number nearest a mistyped count (``"200"`` -> 200, 200.7 -> 200), or 1000 when there is none."""
    try:
        return max(1, int(float(value)))
    except (TypeError, ValueError, OverflowError):
        return 1000


class MemoryIndex:
    """Write cursor and row layout of a memory of ``memory_size`` timesteps x ``num_envs`` environments.

    :param memory_size: number of timesteps kept (the buffers' first axis).
    :param num_envs: number of environments stored side by side (the second axis).
    """

    def __init__(self, memory_size: int, num_envs: int = 1) -> None:
        self.memory_size = _positive_count("memory_size", memory_size, "the number of timesteps to keep")
        self.num_envs = _positive_count("num_envs", num_envs, "the number of environments (env.num_envs)")
        self.filled = False
        self.env_index = 0
        self.memory_index = 0

    @functools.cached_property
    def all_sequence_indexes(self) -> np.ndarray:
        """Every row in env-major order (all timesteps of env 0, then env 1, ...), so that consecutive rows form
        sequences. Built on first use (``sample_all`` with ``sequence_length > 1``): an int64 per row would add 8
        bytes to every row of a replay memory that never reads it (8 MB of a million-row memory)."""
        return np.arange(self.memory_size * self.num_envs).reshape(-1, self.num_envs).T.ravel()

    @property
    def rows(self) -> int:
        """Number of rows of the flat views (``memory_size * num_envs``)."""
        return self.memory_size * self.num_envs

    def __len__(self) -> int:
        """Number of samples stored (every row once the memory has wrapped around)."""
        if self.filled:
            return self.rows
        return self.memory_index * self.num_envs + self.env_index

    def reset(self) -> None:
        """Write from the first row again (the data stays until overwritten; ``len`` is 0)."""
        self.filled = False
        self.env_index = 0
        self.memory_index = 0

    def plan_write(self, shape: Tuple[int, ...]) -> WritePlan:
        """Where a call whose reference tensor (``states``, else the first) has ``shape`` writes.

        ``(num_envs, *size)``: one timestep; ``(n < num_envs, *size)``: the next ``n`` environment slots;
        ``(n > 1, *size)`` with ``num_envs == 1``: ``n`` consecutive timesteps; ``(size,)``: one slot.

        :raises ValueError: any other shape, or more slots than the current timestep has left.
        """
        shape = tuple(int(dimension) for dimension in shape)
        count = shape[0] if shape else 0
        time, env = self.memory_index, self.env_index
        if len(shape) > 1 and count == self.num_envs:
            return self._plan((count,), ((time, None),), time + 1, env)
        if len(shape) > 1 and count < self.num_envs:
            end = env + count
            if end > self.num_envs:
                raise ValueError(
                    f"Memory.add_samples: {count} samples from environment slot {env} exceed num_envs="
                    f"{self.num_envs}: complete the current timestep (num_envs - env_index = {self.num_envs - env} "
                    "samples) first"
                )
            return self._plan((count,), (((time, slice(env, end)), None),), time, end)
        if len(shape) > 1 and self.num_envs == 1:
            return self._plan_timesteps(count)
        if len(shape) == 1:
            return self._plan((), (((time, env), None),), time, env + 1)
        raise ValueError(
            f"Memory.add_samples: the reference tensor has shape {shape} but the memory expects (num_envs="
            f"{self.num_envs}, size): give one row per environment"
        )

    def _plan(self, leading: Tuple[int, ...], pieces: tuple, time: int, env: int) -> WritePlan:
        if env >= self.num_envs:
            env, time = 0, time + 1
        wrapped = time >= self.memory_size
        return WritePlan(leading, pieces, 0 if wrapped else time, env, wrapped)

    def _plan_timesteps(self, count: int) -> WritePlan:
        # only the last memory_size samples survive, each in the row it would reach written one at a time
        skipped = max(0, count - self.memory_size)
        start = (self.memory_index + skipped) % self.memory_size
        first = min(count - skipped, self.memory_size - start)
        # whole tensor when it fits without wrapping (the common case)
        pieces = [((slice(start, start + first), 0), slice(skipped, skipped + first) if first < count else None)]
        if skipped + first < count:
            pieces.append(((slice(0, count - skipped - first), 0), slice(skipped + first, count)))
        end = self.memory_index + count
        return WritePlan((count,), tuple(pieces), end % self.memory_size, 0, end >= self.memory_size)

    def commit(self, plan: WritePlan) -> bool:
        """Move the cursor past a written plan; ``True`` when it wrapped around (time to export)."""
        self.memory_index, self.env_index = plan.memory_index, plan.env_index
        self.filled = self.filled or plan.wrapped
        return plan.wrapped

    def all_rows(self, mini_batches: int = 1, sequence_length: int = 1) -> List[Rows]:
        """The rows of ``sample_all``: every row (unwritten ones included), split into ``mini_batches``.

        Time-major contiguous slices, or the env-major ``all_sequence_indexes`` with ``sequence_length > 1`` (so
        that each environment's timesteps stay consecutive for recurrent models).
        """
        if sequence_length > 1:
            return split_rows(self.all_sequence_indexes, mini_batches)
        return split_range(self.rows, mini_batches)

    def sampleable_rows(self, sequence_length: int = 1) -> int:
        """How many first rows a uniform sample may start from (a sequence must end inside the stored rows).

        :raises ValueError: fewer stored samples than one sequence needs.
        """
        size = len(self) - self.num_envs * (sequence_length - 1)
        if size <= 0:
            raise ValueError(
                f"Memory.sample: the memory holds {len(self)} samples, not enough for sequence_length="
                f"{sequence_length}: add samples before sampling"
            )
        return size

    def sequence_rows(self, starts: np.ndarray, sequence_length: int = 1) -> np.ndarray:
        """Each start row followed by the next ``sequence_length - 1`` timesteps of its environment (flattened)."""
        starts = np.asarray(starts, dtype=np.int64)
        if sequence_length == 1:
            return starts
        offsets = np.arange(sequence_length, dtype=np.int64) * self.num_envs
        return (starts[:, None] + offsets[None, :]).reshape(-1)


class MemoryBase(MemoryIndex):
    """What a backend's ``Memory`` shares: buffers by name, writing, sampling layouts, export and load.

    A backend subclasses it and overrides the hooks (``_parse_device`` ... ``_load_native``); a memory that
    samples overrides :meth:`sample` (``RandomMemory`` calls :meth:`_sample_uniform`).

    :param memory_size: number of timesteps kept (first axis); for on-policy agents, the number of rollouts.
    :param num_envs: number of parallel environments whose samples are stored side by side (second axis).
    :param device: where the buffers (torch) or the arrays read back (JAX) live; ``None``: the backend default.
    :param export: save the whole memory to disk every time it fills up (e.g. to build offline datasets).
    :param export_format: ``"pt"`` (torch backend only), ``"npz"`` (``"np"`` is an alias) or ``"csv"``.
    :param export_directory: where exported files go (a ``memories/`` subfolder is created in it).
    """

    # the backend's own file format ("pt" for torch) and why it is missing where it is not (JAX)
    _native_format: Optional[str] = None
    _native_format_error = "this backend does not write or read 'pt' files: use format 'npz' (or 'csv')"

    def __init__(
        self,
        memory_size: int,
        num_envs: int = 1,
        device: Any = None,
        export: bool = False,
        export_format: str = "pt",
        export_directory: str = "",
    ) -> None:
        if export_format not in EXPORT_FORMATS:
            raise ValueError(
                f"Memory: unsupported export format {export_format!r}: use one of 'pt', 'npz' ('np') or 'csv'"
            )
        if export and EXPORT_FORMATS[export_format] == "pt" and self._native_format != "pt":
            raise ValueError(f"Memory: {self._native_format_error}")
        super().__init__(memory_size, num_envs)
        self.device = self._parse_device(device)
        self.tensors: Dict[str, Any] = {}
        self.tensors_view: Dict[str, Any] = {}
        self.tensors_keep_dimensions: Dict[str, bool] = {}
        self._item_shapes: Dict[str, Tuple[int, ...]] = {}  # each buffer's shape after (memory_size, num_envs)
        self.sampling_indexes: Optional[np.ndarray] = None
        self.export = export
        self.export_format = EXPORT_FORMATS[export_format]
        self.export_directory = export_directory

    # ---- hooks: the tensor code of a backend -------------------------------------------------------------------

    def _parse_device(self, device: Any) -> Any:
        raise NotImplementedError

    def _resolve_dtype(self, dtype: Any) -> Any:
        """The backend dtype of ``dtype`` (a backend or NumPy dtype), the backend default for ``None``."""
        raise NotImplementedError

    def _zeros(self, shape: Tuple[int, ...], dtype: Any) -> Any:
        raise NotImplementedError

    def _fill_nan(self, name: str) -> None:
        """Fill buffer ``name`` with NaN if it is floating point."""
        raise NotImplementedError

    def _write(self, name: str, target: Any, tensor: Any) -> None:
        """``buffer[target] = tensor`` for buffer ``name`` (``tensor`` may be any array type of the backend, or
        NumPy): in place, or by :meth:`_set_buffer` where arrays are immutable (JAX on the device)."""
        raise NotImplementedError

    def _set_buffer(self, name: str, buffer: Any) -> None:
        """Make ``buffer`` the storage of ``name``: in ``tensors``, its ``_tensor_<name>`` attribute and its flat view
        (a view: the buffer is contiguous)."""
        setattr(self, f"_tensor_{name}", buffer)
        self.tensors[name] = buffer
        self.tensors_view[name] = buffer.reshape(-1, *buffer.shape[2:])

    def _write_samples(self, plan: WritePlan, samples: Mapping[str, Any]) -> None:
        """Write one ``add_samples`` call (``samples``: the tensors with a buffer, shapes checked) where ``plan``
        says; the cursor is moved afterwards by :meth:`add_samples`."""
        for name, tensor in samples.items():
            expected = plan.leading_shape + self._item_shapes[name]
            if tuple(tensor.shape) != expected:
                tensor = tensor.reshape(expected)
            for target, source in plan.pieces:
                self._write(name, target, tensor if source is None else tensor[source])

    def _device_rows(self, rows: Rows) -> Any:
        """Backend: row indexes as :meth:`_gather` takes them (a slice stays a slice)."""
        return rows

    def _gather(self, view: Any, rows: Any) -> Any:
        """Rows of a flat view: a slice (a view of it) or row indexes from :meth:`_device_rows` (a copy)."""
        raise NotImplementedError

    def _gather_names(self, names: Sequence[str], rows: Any) -> List[Any]:
        """The rows ``rows`` (from :meth:`_device_rows`) of each named buffer, in the order of ``names``."""
        return [self._gather(self.tensors_view[name], rows) for name in names]

    def _to_numpy(self, tensor: Any) -> np.ndarray:
        raise NotImplementedError

    def _host_indexes(self, indexes: Any) -> np.ndarray:
        """Row indexes given by a caller, as a NumPy integer array."""
        return np.asarray(indexes)

    def _random_starts(self, size: int, batch_size: int, replacement: bool) -> np.ndarray:
        """``batch_size`` rows of ``range(size)`` drawn uniformly with the backend's generator (without
        replacement: at most ``size`` distinct rows)."""
        raise NotImplementedError

    def _output(self, tensors: Any) -> Any:
        """What the public readers return for the stored tensors (JAX: device arrays with the ``"jax"`` backend)."""
        return tensors

    def _save_native(self, path: str, buffers: Dict[str, Any]) -> None:
        raise ValueError(f"Memory.save: {self._native_format_error}")

    def _load_native(self, path: str) -> Dict[str, Any]:
        raise ValueError(f"Memory.load: {self._native_format_error}")

    # ---- buffers ------------------------------------------------------------------------------------------------

    def share_memory(self) -> None:
        """Make the buffers visible to worker processes (a no-op where the backend has nothing to do)."""

    def get_tensor_names(self) -> List[str]:
        """Sorted names of the buffers."""
        return sorted(self.tensors)

    def get_tensor_by_name(self, name: str, keepdim: bool = True) -> Any:
        """The buffer ``(memory_size, num_envs, *size)`` (``keepdim=True``) or its flat view.

        :raises KeyError: no buffer has that name.
        """
        self._buffer(name)
        return self._output(self.tensors[name] if keepdim else self.tensors_view[name])

    def _buffer(self, name: str) -> Any:
        if name not in self.tensors:
            raise KeyError(
                f"Memory has no tensor named {name!r} (it has {self.get_tensor_names()}): call create_tensor first"
            )
        return self.tensors[name]

    def set_tensor_by_name(self, name: str, tensor: Any) -> None:
        """Overwrite a whole buffer in place (views and samplers keep seeing the same storage); a tensor with the
        buffer's number of values but another shape (e.g. flat rows) is reshaped first."""
        buffer = self._buffer(name)
        if tuple(tensor.shape) != tuple(buffer.shape) and math.prod(tensor.shape) == math.prod(buffer.shape):
            tensor = tensor.reshape(buffer.shape)
        self._write(name, Ellipsis, tensor)

    def create_tensor(
        self,
        name: str,
        size: Union[int, Sequence[int], gymnasium.Space],
        dtype: Any = None,
        keep_dimensions: bool = False,
    ) -> bool:
        """Create a buffer; return ``False`` if one with that name (and a compatible size and dtype) exists.

        Creating a buffer fills every floating-point buffer of the memory with NaN (skrl does so) [compat].

        :param name: key used by ``add_samples`` and the samplers.
        :param size: an int, a shape or a gymnasium space (stored flat with its occupied size, e.g. 1 per
            ``Discrete``, unless ``keep_dimensions``).
        :param dtype: buffer dtype (the backend's default float dtype when ``None``).
        :param keep_dimensions: keep the shape of ``size`` instead of flattening it (e.g. images).
        :raises ValueError: a buffer with that name exists with another last dimension or dtype.
        """
        if not keep_dimensions:
            shape: Tuple[int, ...] = (compute_space_size(size, occupied_size=True),)
        elif isinstance(size, gymnasium.Space):
            shape = tuple(size.shape) if size.shape else (compute_space_size(size, occupied_size=True),)
        elif isinstance(size, (int, np.integer)):
            shape = (int(size),)
        else:
            shape = tuple(int(dimension) for dimension in size)
        resolved = self._resolve_dtype(dtype)

        if name in self.tensors:
            existing = self.tensors[name]
            if existing.shape[-1] != shape[-1]:
                raise ValueError(
                    f"Memory.create_tensor: tensor {name!r} already exists with size {existing.shape[-1]}, requested "
                    f"{shape[-1]}: use another name or the same size"
                )
            if dtype is not None and existing.dtype != resolved:
                raise ValueError(
                    f"Memory.create_tensor: tensor {name!r} already exists with dtype {existing.dtype}, requested "
                    f"{resolved}: use another name or the same dtype"
                )
            return False

        self._set_buffer(name, self._zeros((self.memory_size, self.num_envs, *shape), resolved))
        self.tensors_keep_dimensions[name] = bool(keep_dimensions)
        self._item_shapes[name] = shape
        for existing in list(self.tensors):
            self._fill_nan(existing)
        return True

    # ---- writing ------------------------------------------------------------------------------------------------

    def add_samples(self, **tensors: Any) -> None:
        """Write samples (``name=tensor``; names without a buffer are ignored) at the cursor and move it.

        The layout is read from ``states`` (or the first tensor): ``(num_envs, *size)`` one timestep, ``(n <
        num_envs, *size)`` the next ``n`` environment slots, ``(n, *size)`` with ``num_envs == 1`` ``n`` timesteps
        (wrapping around), ``(*size,)`` one environment slot. Filling the last row wraps the cursor to row 0, sets
        ``filled`` and, with ``export``, saves the memory.

        :raises ValueError: no tensors, or a shape that fits none of these layouts.
        """
        if not tensors:
            raise ValueError(
                "Memory.add_samples: no tensors given: pass them as keyword arguments (name=tensor), "
                "e.g. memory.add_samples(states=states, actions=actions)"
            )
        reference = tensors["states"] if "states" in tensors else next(iter(tensors.values()))
        plan = self.plan_write(tuple(reference.shape))
        samples = {name: tensor for name, tensor in tensors.items() if name in self.tensors}
        for name, tensor in samples.items():  # every shape is checked before anything is written
            conformed_shape(name, tuple(tensor.shape), plan.leading_shape + self._item_shapes[name])
        self._write_samples(plan, samples)
        if self.commit(plan) and self.export:
            self.save(directory=self.export_directory, format=self.export_format)

    # ---- reading ------------------------------------------------------------------------------------------------

    def _read(self, names: Sequence[str], batches: Sequence[Rows]) -> List[List[Any]]:
        for name in names:
            self._buffer(name)
        batches = [self._device_rows(rows) for rows in batches]  # converted once per batch, not once per name
        return self._output([self._gather_names(names, rows) for rows in batches])

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[Any]]:
        """Draw a batch of samples (defined by subclasses, e.g. ``RandomMemory``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement sample(): use RandomMemory")

    def _sample_uniform(
        self, names: Sequence[str], batch_size: int, mini_batches: int, sequence_length: int, replacement: bool
    ) -> List[List[Any]]:
        # sequences are consecutive timesteps of one environment; they may cross episode ends or the write
        # position [compat]
        starts = self._random_starts(self.sampleable_rows(sequence_length), batch_size, replacement)
        self.sampling_indexes = self.sequence_rows(starts, sequence_length)
        return self.sample_by_index(names, self.sampling_indexes, mini_batches)

    def sample_by_index(self, names: Sequence[str], indexes: Any, mini_batches: int = 1) -> List[List[Any]]:
        """Rows ``indexes`` of each named flat view: one list (one tensor per name, in the order of ``names``) per
        mini-batch; ``indexes`` are split in order with :func:`split_rows`."""
        return self._read(names, split_rows(self._host_indexes(indexes), mini_batches))

    def sample_all(self, names: Sequence[str], mini_batches: int = 1, sequence_length: int = 1) -> List[List[Any]]:
        """The whole memory (unwritten rows included) as ``mini_batches`` lists of one tensor per name.

        Mini-batches are contiguous, unshuffled, and together hold every row (:meth:`MemoryIndex.all_rows`);
        with ``sequence_length > 1`` the rows come env-major, each environment's timesteps in order.
        """
        return self._read(names, self.all_rows(mini_batches, sequence_length))

    def get_sampling_indexes(self) -> Optional[np.ndarray]:
        """Row indexes drawn by the last ``sample`` call."""
        return self.sampling_indexes

    # ---- files --------------------------------------------------------------------------------------------------

    # ---- full-state checkpoints -----------------------------------------------------------------------------------

    def run_state(self, contents: bool = True) -> Dict[str, Any]:
        """The write cursor and (``contents``) a host copy of every buffer, for a run checkpoint."""
        state: Dict[str, Any] = {
            "memory_size": self.memory_size,
            "num_envs": self.num_envs,
            "memory_index": self.memory_index,
            "env_index": self.env_index,
            "filled": self.filled,
            "sampling_indexes": self.sampling_indexes,
            "shapes": {name: tuple(tensor.shape) for name, tensor in self.tensors.items()},
        }
        if contents:
            state["tensors"] = {name: self._to_numpy(tensor).copy() for name, tensor in self.tensors.items()}
        return state

    def check_run_state(self, state: Mapping[str, Any]) -> None:
        """:raises ValueError: naming the size, tensor or shape of ``state`` that differs from this memory."""
        if (state["memory_size"], state["num_envs"]) != (self.memory_size, self.num_envs):
            raise ValueError(
                f"memory_size={state['memory_size']}, num_envs={state['num_envs']} in the checkpoint, "
                f"memory_size={self.memory_size}, num_envs={self.num_envs} here"
            )
        here = {name: tuple(tensor.shape) for name, tensor in self.tensors.items()}
        if state["shapes"] != here:
            raise ValueError(f"tensors {state['shapes']} in the checkpoint, {here} here")

    def load_run_state(self, state: Mapping[str, Any]) -> None:
        """Load :meth:`run_state`'s dict (checked by :meth:`check_run_state`) in place."""
        for name, array in state.get("tensors", {}).items():
            self._write(name, Ellipsis, array)
        self.memory_index, self.env_index, self.filled = state["memory_index"], state["env_index"], state["filled"]
        self.sampling_indexes = state["sampling_indexes"]

    def save(self, directory: str = "", format: str = "pt") -> None:
        """Write the memory to ``<directory>/memories/<timestamp>_memory_<id>.<format>``.

        :param directory: target folder (``export_directory`` when empty).
        :param format: ``"pt"`` (torch) and ``"npz"`` (``"np"``) store the full buffers by sorted name; ``"csv"``
            appends a header (``<name>.<i>`` for each scalar of each sorted name) and the ``len(memory)`` first rows
            of the flat views.
        """
        format = EXPORT_FORMATS.get(format, format)
        if format not in ("pt", "npz", "csv"):
            raise ValueError(f"Memory.save: unsupported format {format!r}: use 'pt', 'npz' or 'csv'")
        directory = directory or self.export_directory
        os.makedirs(os.path.join(directory, "memories"), exist_ok=True)
        timestamp = datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f")
        path = os.path.join(directory, "memories", f"{timestamp}_memory_{hex(id(self))}.{format}")
        names = self.get_tensor_names()
        if format == "pt":
            self._save_native(path, {name: self.tensors[name] for name in names})
        elif format == "npz":
            np.savez(path, **{name: self._to_numpy(self.tensors[name]) for name in names})
        else:
            rows = len(self)
            columns = [self._to_numpy(self.tensors_view[name][:rows]).reshape(rows, -1) for name in names]
            with open(path, "a", newline="") as file:
                writer = csv.writer(file)
                writer.writerow([f"{name}.{i}" for name, column in zip(names, columns) for i in range(column.shape[1])])
                for row in range(rows):
                    writer.writerow([value for column in columns for value in column[row].tolist()])

    def load(self, path: str) -> None:
        """Copy the buffers saved in a ``.npz`` (or the backend's native, e.g. ``.pt``) file into this memory.

        Existing buffers must have the saved shapes and are overwritten in place, so views and samplers see the
        loaded data; buffers the memory lacks are created with the saved shape and dtype. The cursor is unchanged.

        :raises ValueError: unknown extension, or a saved shape that does not fit the memory.
        """
        if path.endswith(".npz"):
            with np.load(path) as archive:
                data = {name: archive[name] for name in archive.files}
        elif path.endswith(".csv"):
            raise NotImplementedError("Memory.load: loading CSV files is not implemented: save as 'npz'")
        elif self._native_format and path.endswith(f".{self._native_format}"):
            data = self._load_native(path)
        elif path.endswith(".pt"):
            raise ValueError(f"Memory.load: {self._native_format_error}")
        else:
            raise ValueError(f"Memory.load: unsupported file {path!r}: give a '.npz' file (or '.pt' with torch)")

        for name, tensor in data.items():
            shape = tuple(tensor.shape)
            if name in self.tensors:
                expected, fits = tuple(self.tensors[name].shape), shape == tuple(self.tensors[name].shape)
            else:
                expected = (self.memory_size, self.num_envs, "size...")
                fits = len(shape) > 2 and shape[:2] == (self.memory_size, self.num_envs)
            if not fits:
                raise ValueError(
                    f"Memory.load: tensor {name!r} in {path} has shape {shape} but the memory expects {expected}: "
                    "create the memory with the same memory_size, num_envs and sizes"
                )
        for name in [name for name in data if name not in self.tensors]:
            shape = tuple(data[name].shape)
            self.create_tensor(name, shape[2:], dtype=data[name].dtype, keep_dimensions=len(shape) > 3)
        for name, tensor in data.items():
            self.set_tensor_by_name(name, tensor)
