"""The JAX-backend ``Memory``: the array code (host NumPy buffers, device transfer on read) under the neutral memory.

Storage decision: the buffers are always **host NumPy arrays**, for both ``config.jax.backend`` values. Writing a
step (``add_samples``) is then one in-place ``buffer[memory_index] = array`` per name, with no device dispatch
and no allocation; JAX arrays given to it are copied to the host once (the environment needs the actions there
anyway). With the ``"jax"`` backend, everything read back (``sample*``, ``get_tensor_by_name``) is transferred
to :attr:`Memory.device` as JAX arrays, i.e. once per update rather than once per step. ``tensors`` and
``tensors_view`` hold the NumPy buffers and real views of them. Cursor, layouts, mini-batch split and file layout
live in :mod:`skrl_like.core.memory_index`.
"""

from typing import Any, Tuple, Union

import jax
import numpy as np

from skrl_like import config
from skrl_like.core.memory_index import MemoryBase, Rows


def _to_host(array: Any) -> np.ndarray:
    return np.asarray(jax.device_get(array)) if isinstance(array, jax.Array) else np.asarray(array)


class Memory(MemoryBase):
    """Base class of the JAX-backend memories: named circular buffers ``(memory_size, num_envs, size)``.

    :param memory_size: number of timesteps each buffer holds (its first axis); for on-policy agents, the rollout
        length.
    :param num_envs: number of environments written at every step (second axis).
    :param device: JAX device the arrays read back are put on with the ``"jax"`` backend (``None``: default).
    :param export: save the whole memory to a file every time it fills up (e.g. to build offline data sets).
    :param export_format: file format of the export: ``"npz"`` (``"np"`` is taken as ``"npz"``) or ``"csv"``;
        ``"pt"`` is accepted only without ``export`` (the JAX backend never writes torch files).
    :param export_directory: folder of the exported files (a ``memories`` sub-folder is created in it).
    """

    _native_format_error = (
        "the JAX backend does not write or read PyTorch ('pt') memory files, so that it never needs torch: "
        "use format 'npz' (or 'csv')"
    )

    def _parse_device(self, device: Union[str, jax.Device, None]) -> jax.Device:
        return config.jax.parse_device(device)

    def _resolve_dtype(self, dtype: Any) -> np.dtype:
        return np.dtype(np.float32 if dtype is None else dtype)

    def _zeros(self, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    def _fill_nan(self, buffer: np.ndarray) -> None:
        if np.issubdtype(buffer.dtype, np.floating):
            buffer.fill(np.nan)

    def _write(self, buffer: np.ndarray, target: Any, tensor: Any) -> None:
        buffer[target] = tensor if isinstance(tensor, np.ndarray) else _to_host(tensor)

    def _gather(self, view: np.ndarray, rows: Rows) -> np.ndarray:
        return view[rows]

    def _to_numpy(self, tensor: np.ndarray) -> np.ndarray:
        return tensor

    def _host_indexes(self, indexes: Any) -> np.ndarray:
        return _to_host(indexes)

    def _random_starts(self, size: int, batch_size: int, replacement: bool) -> np.ndarray:
        # NumPy's global generator (seeded by set_seed), as skrl's JAX memories
        if replacement:
            return np.random.randint(0, size, (batch_size,))
        return np.random.permutation(size)[:batch_size]

    def _output(self, tensors: Any) -> Any:
        return jax.device_put(tensors, self.device) if config.jax.backend == "jax" else tensors
