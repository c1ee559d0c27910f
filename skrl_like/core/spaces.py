"""Space sizes, shared by both backends (no tensors involved)."""

from typing import Any

import gymnasium
import numpy as np


def compute_space_size(space: Any, occupied_size: bool = False) -> int:
    """Number of scalars a space takes.

    :param space: ``None``, an int, a sequence of ints (a shape) or a gymnasium space.
    :param occupied_size: count a ``Discrete`` as 1 and a ``MultiDiscrete`` as its number of components
        (how actions are stored) instead of their one-hot sizes.
    """
    if space is None:
        return 0
    if occupied_size:
        if isinstance(space, gymnasium.spaces.Discrete):
            return 1
        if isinstance(space, gymnasium.spaces.MultiDiscrete):
            return int(np.prod(space.nvec.shape))
        if isinstance(space, gymnasium.spaces.Tuple):
            return sum(compute_space_size(s, occupied_size=True) for s in space)
        if isinstance(space, gymnasium.spaces.Dict):
            return sum(compute_space_size(space[k], occupied_size=True) for k in sorted(space.keys()))
    if isinstance(space, (int, float, np.integer)):
        return int(space)
    if isinstance(space, (list, tuple)):
        return int(np.prod(space))
    if isinstance(space, gymnasium.Space):
        return int(gymnasium.spaces.flatdim(space))
    raise ValueError(f"Cannot compute the size of space {space!r}: use an int, a shape or a gymnasium space")
