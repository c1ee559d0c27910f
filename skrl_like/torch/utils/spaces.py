"""Conversions between gymnasium spaces, their samples and flat torch tensors.

Every tensor exchanged inside skrl_like is batched and flat: ``(batch, size)``. These helpers go from an
environment's (possibly nested) samples to that form and back. Supported spaces: ``Box``, ``Discrete``,
``MultiDiscrete`` and the composites ``Tuple`` and ``Dict`` (whose keys are always visited in sorted order, so a
flat layout never depends on insertion order).
"""

from typing import Any, Literal, Optional, Sequence, Union

import gymnasium
import numpy as np
import torch
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


def tensorize_space(space: Optional[gymnasium.Space], x: Any, device: Any = None) -> Any:
    """Turn a (batched or single) sample of ``space`` into tensors with a leading batch dimension.

    :param space: the space ``x`` belongs to (``None`` -> ``None``).
    :param x: ``None`` (-> ``None``), a NumPy array, Python number, tensor, or a tuple/dict of those for
        composite spaces.
    :param device: where the tensors go (``None``: torch's default device).
    """
    if space is None or x is None:
        return None
    if isinstance(space, spaces.Box):
        if isinstance(x, torch.Tensor):
            return x.reshape(-1, *space.shape)
        if isinstance(x, np.ndarray):
            return (
                torch.from_numpy(np.ascontiguousarray(x))
                .to(device=device, dtype=torch.float32)
                .reshape(-1, *space.shape)
            )
        raise ValueError(f"Box sample of type {type(x).__name__} is not supported: give a NumPy array or a tensor")
    if isinstance(space, spaces.Discrete):
        if isinstance(x, torch.Tensor):
            return x.reshape(-1, 1)
        if isinstance(x, (np.ndarray, np.number, int, float)):
            return torch.tensor(np.asarray(x), dtype=torch.int32, device=device).reshape(-1, 1)
        raise ValueError(f"Discrete sample of type {type(x).__name__} is not supported: give an int or an array")
    if isinstance(space, spaces.MultiDiscrete):
        if isinstance(x, torch.Tensor):
            return x.reshape(-1, *space.shape)
        if isinstance(x, (np.ndarray, list, tuple)):
            return torch.tensor(np.asarray(x), dtype=torch.int32, device=device).reshape(-1, *space.shape)
        raise ValueError(f"MultiDiscrete sample of type {type(x).__name__} is not supported: give an array")
    if isinstance(space, spaces.Tuple):
        return tuple(tensorize_space(child, value, device) for child, value in zip(space, x))
    if isinstance(space, spaces.Dict):
        return {key: tensorize_space(space[key], x[key], device) for key in sorted(space.keys())}
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def _to_numpy(x: torch.Tensor) -> np.ndarray:
    # NumPy has no bfloat16
    if x.dtype == torch.bfloat16:
        x = x.to(torch.float32)
    return x.detach().cpu().numpy()


def untensorize_space(space: Optional[gymnasium.Space], x: Any, squeeze_batch_dimension: bool = True) -> Any:
    """Turn tensors back into NumPy values an environment accepts (dtype of the space).

    :param space: the space the values must belong to (``None`` -> ``None``).
    :param x: ``None`` (-> ``None``), a tensor (or a list/tuple/dict of tensors for composite spaces) with a
        leading batch dimension.
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
        if squeeze_batch_dimension and x.shape[0] == 1:
            return x.item()
        return _to_numpy(x).astype(space.dtype, copy=False).reshape(-1, 1)
    if isinstance(space, spaces.MultiDiscrete):
        array = _to_numpy(x).astype(space.dtype, copy=False)
        if squeeze_batch_dimension and array.shape[0] == 1:
            return array.reshape(space.nvec.shape)
        return array.reshape(-1, *space.nvec.shape)
    if isinstance(space, spaces.Tuple):
        return tuple(untensorize_space(child, value, squeeze_batch_dimension) for child, value in zip(space, x))
    if isinstance(space, spaces.Dict):
        return {key: untensorize_space(space[key], x[key], squeeze_batch_dimension) for key in sorted(space.keys())}
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def flatten_tensorized_space(x: Any) -> Optional[torch.Tensor]:
    """Flatten tensorized samples to ``(batch, size)``; composites are concatenated on the last axis.

    :param x: a tensor (a 1-D tensor is taken as a batch of one), or a tuple/list/dict of those (dict keys sorted).
    """
    if x is None:
        return None
    if isinstance(x, torch.Tensor):
        return x.reshape(1, -1) if x.ndim < 2 else x.reshape(x.shape[0], -1)
    if isinstance(x, (tuple, list)):
        return torch.cat([flatten_tensorized_space(value) for value in x], dim=-1)
    if isinstance(x, dict):
        return torch.cat([flatten_tensorized_space(x[key]) for key in sorted(x.keys())], dim=-1)
    raise ValueError(f"Cannot flatten a value of type {type(x).__name__}: give a tensor, a tuple/list or a dict")


def unflatten_tensorized_space(space: Optional[gymnasium.Space], x: Optional[torch.Tensor]) -> Any:
    """Split a flat ``(batch, size)`` tensor back into the structure of ``space`` (inverse of flattening).

    :param space: the space that defines the layout (children consume their occupied sizes in order).
    :param x: the flat tensor.
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
        if isinstance(space, spaces.Tuple):
            keys: Sequence[Any] = range(len(space))
        else:
            keys = sorted(space.keys())
        children = []
        start = 0
        for key in keys:
            size = compute_space_size(space[key], occupied_size=True)
            children.append(unflatten_tensorized_space(space[key], x[:, start : start + size]))
            start += size
        if isinstance(space, spaces.Tuple):
            return children
        return dict(zip(keys, children))
    raise ValueError(f"Unsupported space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")


def _batched_sample_to_torch(space: gymnasium.Space, sample: Any, device: Any) -> Any:
    if isinstance(space, spaces.Tuple):
        return tuple(_batched_sample_to_torch(child, value, device) for child, value in zip(space, sample))
    if isinstance(space, spaces.Dict):
        return {key: _batched_sample_to_torch(space[key], sample[key], device) for key in sorted(space.keys())}
    return torch.as_tensor(np.asarray(sample), device=device)


def _reshape_batched_sample(space: gymnasium.Space, sample: Any, batch_size: int) -> Any:
    # batch_space turns Discrete into MultiDiscrete of shape (batch,): give it its (batch, 1) column shape
    if isinstance(space, spaces.Discrete):
        return np.asarray(sample).reshape(batch_size, 1)
    if isinstance(space, spaces.Tuple):
        return tuple(_reshape_batched_sample(child, value, batch_size) for child, value in zip(space, sample))
    if isinstance(space, spaces.Dict):
        return {key: _reshape_batched_sample(space[key], sample[key], batch_size) for key in sorted(space.keys())}
    return sample


def sample_space(
    space: Optional[gymnasium.Space],
    batch_size: int = 1,
    backend: Literal["numpy", "native"] = "numpy",
    device: Union[str, torch.device, None] = None,
) -> Any:
    """Draw a random batch from ``space``.

    :param space: the space to sample (``None`` -> ``None``).
    :param batch_size: number of samples (leading dimension of every array).
    :param backend: ``"numpy"`` for NumPy arrays, ``"native"`` for torch tensors on ``device``.
    :param device: where ``"native"`` tensors go.
    """
    if space is None:
        return None
    if backend not in ("numpy", "native"):
        raise ValueError(f"Unknown backend {backend!r} for sample_space: use 'numpy' or 'native'")
    sample = gymnasium.vector.utils.batch_space(space, batch_size).sample()
    sample = _reshape_batched_sample(space, sample, batch_size)
    if backend == "native":
        return _batched_sample_to_torch(space, sample, device)
    return sample
