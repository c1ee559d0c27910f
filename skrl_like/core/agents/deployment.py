"""``Agent.compute_action``'s backend-neutral half: telling one observation from a batch, and shaping actions for an env.

A deployed policy gets observations straight from an environment (or a robot), with no wrapper in between: one
observation shaped like the observation space, or a batch of them. The agent works on flat ``(batch, size)``
arrays, so the observation is checked against the space here (a wrong shape fails naming both shapes, instead of
as a matrix-size error deep inside a model) and the actions are handed back in the layout a gymnasium env accepts.
"""

from typing import Any, Optional

import gymnasium
import numpy as np

from skrl_like.core.spaces import compute_space_size


def observation_space_of(space: Any) -> gymnasium.Space:
    """The agent's observation space as a gymnasium space (an int or a shape given to the agent is a ``Box``)."""
    if isinstance(space, gymnasium.Space):
        return space
    if space is None:
        raise ValueError("compute_action needs the agent's observation_space: build the agent with one")
    shape = (int(space),) if np.ndim(space) == 0 else tuple(int(size) for size in space)
    return gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=shape, dtype=np.float32)


def _describe(observation: Any) -> str:
    if isinstance(observation, dict):
        return "a dict with keys " + str(sorted(observation))
    return f"shape {np.shape(observation)}"


def batch_size_of(space: gymnasium.Space, observation: Any, where: str = "compute_action") -> Optional[int]:
    """``None`` when ``observation`` is one sample of ``space``, else the size of its leading batch axis.

    :raises ValueError: ``observation`` is neither one sample of ``space`` nor a batch of them (the message names the
        shape received and the shapes accepted).
    """
    if isinstance(space, (gymnasium.spaces.Box, gymnasium.spaces.MultiDiscrete, gymnasium.spaces.Discrete)):
        if isinstance(space, gymnasium.spaces.Discrete):
            sample_shapes = [(), (1,)]
        else:
            sample_shapes = [space.shape if isinstance(space, gymnasium.spaces.Box) else space.nvec.shape]
        shape = np.shape(observation)
        if shape in sample_shapes[:1]:
            return None
        if len(shape) >= 1 and shape[1:] in sample_shapes and shape[0] >= 1:
            return shape[0]
        accepted = " or ".join(str(s) for s in sample_shapes)
        batched = " or ".join(str(("batch",) + s) for s in sample_shapes)
        raise ValueError(
            f"{where}: the observation has {_describe(observation)}, but the observation space {space} takes one "
            f"observation of shape {accepted} or a batch of shape {batched}: reshape the observation"
        )
    if isinstance(space, gymnasium.spaces.Dict):
        if not isinstance(observation, dict) or set(observation) != set(space.keys()):
            raise ValueError(
                f"{where}: the observation is {_describe(observation)}, but the observation space is a Dict with "
                f"keys {sorted(space.keys())}: give a dict with exactly those keys"
            )
        sizes = {batch_size_of(space[key], observation[key], f"{where} (key {key!r})") for key in space.keys()}
    elif isinstance(space, gymnasium.spaces.Tuple):
        if not isinstance(observation, (tuple, list)) or len(observation) != len(space):
            raise ValueError(
                f"{where}: the observation space is a Tuple of {len(space)} spaces; give a tuple of {len(space)} "
                f"values, not {type(observation).__name__}"
            )
        sizes = {
            batch_size_of(child, value, f"{where} (item {i})")
            for i, (child, value) in enumerate(zip(space, observation))
        }
    else:
        raise ValueError(f"{where}: observation spaces of type {type(space).__name__} are not supported")
    if len(sizes) != 1:
        raise ValueError(f"{where}: the parts of the observation have different batch sizes {sorted(sizes, key=str)}")
    return sizes.pop()


def as_numpy(space: gymnasium.Space, observation: Any) -> Any:
    """``observation`` with NumPy arrays as leaves (float32 for ``Box`` parts), the form the backends' space helpers
    take (lists and Python numbers included)."""
    if isinstance(space, gymnasium.spaces.Box):
        return np.asarray(observation, dtype=np.float32)
    if isinstance(space, gymnasium.spaces.Dict):
        return {key: as_numpy(space[key], observation[key]) for key in space.keys()}
    if isinstance(space, gymnasium.spaces.Tuple):
        return tuple(as_numpy(child, value) for child, value in zip(space, observation))
    return np.asarray(observation)


def actions_for_env(space: Any, actions: np.ndarray, single: bool) -> Any:
    """Flat ``(batch, size)`` actions in the layout a gymnasium env (``single``) or vector env takes: ``Box`` ->
    ``(batch, *shape)`` in the space's dtype, ``Discrete`` -> ``(batch,)`` integers, ``MultiDiscrete`` ->
    ``(batch, *nvec.shape)``; one observation gives one action (the batch axis dropped, a NumPy integer for
    ``Discrete``). Other spaces (or an action space given as a size) keep the flat layout."""
    actions = np.asarray(actions)
    batch = actions.shape[0]
    if isinstance(space, gymnasium.spaces.Box):
        actions = actions.reshape(batch, *space.shape).astype(space.dtype, copy=False)
    elif isinstance(space, gymnasium.spaces.Discrete):
        actions = actions.reshape(batch).astype(space.dtype, copy=False)
    elif isinstance(space, gymnasium.spaces.MultiDiscrete):
        actions = actions.reshape(batch, *space.nvec.shape).astype(space.dtype, copy=False)
    else:
        actions = actions.reshape(batch, max(compute_space_size(space, occupied_size=True), 1))
    return actions[0] if single else actions
