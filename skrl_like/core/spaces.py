"""Space sizes and gym-to-gymnasium space conversion, shared by both backends (no tensors involved)."""

from typing import Any, Optional

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


def convert_gym_space(space: Any, squeeze_batch_dimension: bool = False) -> Optional[gymnasium.Space]:
    """Convert an OpenAI Gym space into the equivalent gymnasium space.

    :param space: a ``gym`` space (``Box``, ``Discrete``, ``MultiDiscrete``, ``Tuple``, ``Dict``) or ``None``.
    :param squeeze_batch_dimension: drop the first axis of a ``Box`` (gym vector envs expose batched spaces).
    """
    if space is None:
        return None
    import gym  # optional dependency: only needed by users who still run OpenAI Gym environments

    spaces = gymnasium.spaces
    if isinstance(space, gym.spaces.Discrete):
        return spaces.Discrete(n=int(space.n))
    if isinstance(space, gym.spaces.Box):
        if squeeze_batch_dimension and space.shape:
            return spaces.Box(low=space.low[0], high=space.high[0], shape=space.shape[1:], dtype=space.dtype)
        return spaces.Box(low=space.low, high=space.high, shape=space.shape, dtype=space.dtype)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return spaces.MultiDiscrete(nvec=space.nvec)
    if isinstance(space, gym.spaces.Tuple):
        return spaces.Tuple([convert_gym_space(child, squeeze_batch_dimension) for child in space])
    if isinstance(space, gym.spaces.Dict):
        return spaces.Dict({key: convert_gym_space(space[key], squeeze_batch_dimension) for key in space.keys()})
    raise ValueError(f"Unsupported gym space {type(space).__name__}: use Box, Discrete, MultiDiscrete, Tuple or Dict")
