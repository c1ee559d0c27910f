"""Conversions between gymnasium spaces, their samples and flat NumPy/JAX arrays.

Every array exchanged inside skrl_like is batched and flat: ``(batch, size)``. These helpers go from an
environment's (possibly nested) samples to that form and back. Supported spaces: ``Box``, ``Discrete``,
``MultiDiscrete`` and the composites ``Tuple`` and ``Dict`` (whose keys are always visited in sorted order, so a
flat layout never depends on insertion order). NumPy arrays stay NumPy arrays unless asked otherwise, so the
``"numpy"`` backend never touches a device.
"""

from typing import Any, Literal, Optional, Sequence, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces

from skrl_like.core.spaces import compute_space_size, convert_gym_space

__all__ = [
    "compute_space_size",
    "convert_gym_space",
    "flatten_tensorized_space",
    "sample_space",
    "tensorize_space",
    "unflatten_tensorized_space",
    "untensorize_space",
]


def tensorize_space(space: Optional[gymnasium.Space], x: Any, *, device: Any = None, _jax: bool = True) -> Any:
    """Turn a (batched or single) sample of ``space`` into arrays with a leading batch dimension.

    :param space: the space ``x`` belongs to (``None`` -> ``None``).
    :param x: ``None`` (-> ``None``), a NumPy array, Python number, JAX array, or a tuple/dict of those for
        composite spaces.
    :param device: where JAX arrays go (``None``: JAX's default device).
    :param _jax: ``False`` returns NumPy arrays (the ``"numpy"`` backend: NumPy inputs stay on the host, ``Box`` values
        keep their dtype, JAX inputs are copied to the host, as skrl does); ``True`` puts them on ``device``.
    """
    if space is None or x is None:
        return None
    if isinstance(space, spaces.Box):
        if isinstance(x, jax.Array):
            return x.reshape(-1, *space.shape) if _jax else np.asarray(x).reshape(-1, *space.shape)
        if isinstance(x, np.ndarray):
            array = x.reshape(-1, *space.shape)
            return jax.device_put(array.astype(np.float32, copy=False), device) if _jax else array
        raise ValueError(f"Box sample of type {type(x).__name__} is not supported: give a NumPy or JAX array")
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)):
        shape = (1,) if isinstance(space, spaces.Discrete) else space.shape
        if isinstance(x, jax.Array):
            return x.reshape(-1, *shape) if _jax else np.asarray(x, dtype=np.int32).reshape(-1, *shape)
        accepted = (
            (np.ndarray, np.number, int, float) if isinstance(space, spaces.Discrete) else (np.ndarray, list, tuple)
        )
        if isinstance(x, accepted):
            array = np.asarray(x, dtype=np.int32).reshape(-1, *shape)
            return jax.device_put(array, device) if _jax else array
        raise ValueError(f"{type(space).__name__} sample of type {type(x).__name__} is not supported: give an array")
    if isinstance(space, spaces.Tuple):
        return tuple(tensorize_space(child, value, device=device, _jax=_jax) for child, value in zip(space, x))
    if isinstance(space, spaces.Dict):
        return {key: tensorize_space(space[key], x[key], device=device, _jax=_jax) for key in sorted(space.keys())}
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def _to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, jax.Array):
        x = jax.device_get(x)
    array = np.asarray(x)
    if array.dtype == jnp.bfloat16:  # NumPy cannot cast bfloat16 to the space dtypes directly
        array = array.astype(np.float32)
    return array


def untensorize_space(space: Optional[gymnasium.Space], x: Any, *, squeeze_batch_dimension: bool = True) -> Any:
    """Turn arrays back into NumPy values an environment accepts (dtype of the space).

    :param space: the space the values must belong to (``None`` -> ``None``).
    :param x: ``None`` (-> ``None``), a JAX or NumPy array (or a list/tuple/dict of those for composite spaces)
        with a leading batch dimension.
    :param squeeze_batch_dimension: a batch of one becomes a single sample (a Python scalar for ``Discrete``), as a
        non-vectorized environment expects.
    """
    if space is None or x is None:
        return None
    if isinstance(space, spaces.Box):
        array = _to_numpy(x).astype(space.dtype, copy=False)
        if squeeze_batch_dimension and array.shape[0] == 1:
            return array.reshape(space.shape)
        return array.reshape(-1, *space.shape)
    if isinstance(space, spaces.Discrete):
        array = _to_numpy(x)
        if squeeze_batch_dimension and array.shape[0] == 1:
            return array.item()
        return array.astype(space.dtype, copy=False).reshape(-1, 1)
    if isinstance(space, spaces.MultiDiscrete):
        array = _to_numpy(x).astype(space.dtype, copy=False)
        if squeeze_batch_dimension and array.shape[0] == 1:
            return array.reshape(space.nvec.shape)
        return array.reshape(-1, *space.nvec.shape)
    if isinstance(space, spaces.Tuple):
        return tuple(
            untensorize_space(child, value, squeeze_batch_dimension=squeeze_batch_dimension)
            for child, value in zip(space, x)
        )
    if isinstance(space, spaces.Dict):
        return {
            key: untensorize_space(space[key], x[key], squeeze_batch_dimension=squeeze_batch_dimension)
            for key in sorted(space.keys())
        }
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def flatten_tensorized_space(x: Any, *, _jax: bool = True) -> Any:
    """Flatten tensorized samples to ``(batch, size)``; composites are concatenated on the last axis.

    :param x: an array (a 1-D array is taken as a batch of one), or a tuple/list/dict of those (dict keys sorted).
    :param _jax: concatenate composites with ``jax.numpy`` (``True``) or NumPy (``False``); single arrays are
        reshaped and keep their type either way.
    """
    if x is None:
        return None
    if isinstance(x, (np.ndarray, jax.Array)):
        return x.reshape(1, -1) if x.ndim < 2 else x.reshape(x.shape[0], -1)
    if isinstance(x, (tuple, list, dict)):
        values = [x[key] for key in sorted(x.keys())] if isinstance(x, dict) else x
        concatenate = jnp.concatenate if _jax else np.concatenate
        return concatenate([flatten_tensorized_space(value, _jax=_jax) for value in values], axis=-1)
    raise ValueError(f"Cannot flatten a value of type {type(x).__name__}: give an array, a tuple/list or a dict")


def unflatten_tensorized_space(space: Optional[gymnasium.Space], x: Any) -> Any:
    """Split a flat ``(batch, size)`` array back into the structure of ``space`` (inverse of flattening).

    :param space: the space that defines the layout (children consume their occupied sizes in order).
    :param x: the flat NumPy or JAX array.
    """
    if space is None or x is None:
        return None
    if isinstance(space, spaces.Box):
        return x.reshape(-1, *space.shape)
    if isinstance(space, spaces.Discrete):
        return x.reshape(-1, 1)
    if isinstance(space, spaces.MultiDiscrete):
        return x.reshape(-1, *space.shape)
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        keys: Sequence[Any] = range(len(space)) if isinstance(space, spaces.Tuple) else sorted(space.keys())
        children = []
        start = 0
        for key in keys:
            size = compute_space_size(space[key], occupied_size=True)
            children.append(unflatten_tensorized_space(space[key], x[:, start : start + size]))
            start += size
        return children if isinstance(space, spaces.Tuple) else dict(zip(keys, children))
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def _batched_sample(space: gymnasium.Space, sample: Any, batch_size: int, native: bool, device: Any) -> Any:
    if isinstance(space, spaces.Tuple):
        return tuple(_batched_sample(child, value, batch_size, native, device) for child, value in zip(space, sample))
    if isinstance(space, spaces.Dict):
        return {
            key: _batched_sample(space[key], sample[key], batch_size, native, device) for key in sorted(space.keys())
        }
    array = np.asarray(sample)
    if isinstance(space, spaces.Discrete):  # batch_space makes a MultiDiscrete of shape (batch,): use a column
        array = array.reshape(batch_size, 1)
    return jax.device_put(array, device) if native else array


def sample_space(
    space: Optional[gymnasium.Space],
    *,
    batch_size: int = 1,
    backend: Literal["numpy", "native"] = "numpy",
    device: Union[str, jax.Device, None] = None,
) -> Any:
    """Draw a random batch from ``space``.

    :param space: the space to sample (``None`` -> ``None``).
    :param batch_size: number of samples (leading dimension of every array).
    :param backend: ``"numpy"`` for NumPy arrays, ``"native"`` for JAX arrays on ``device``.
    :param device: where ``"native"`` arrays go (``None``: JAX's default device).
    """
    if space is None:
        return None
    if backend not in ("numpy", "native"):
        raise ValueError(f"Unknown backend {backend!r} for sample_space: use 'numpy' or 'native'")
    sample = gymnasium.vector.utils.batch_space(space, batch_size).sample()
    if backend == "native" and device is not None and not isinstance(device, jax.Device):
        from skrl_like import config

        device = config.jax.parse_device(device)
    return _batched_sample(space, sample, batch_size, backend == "native", device)
