"""``DeterministicMixin``: the network output is the action (values, Q-functions, deterministic policies)."""

from collections.abc import Mapping
from typing import Any

import flax.linen
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def _clip(actions: jax.Array, low: jax.Array, high: jax.Array) -> jax.Array:
    return jnp.clip(actions, min=low, max=high)


class DeterministicMixin:
    """Deterministic model: ``act`` returns the network output unchanged (optionally clipped).

    :param clip_actions: clip outputs to the bounds of a ``Box`` action space (for deterministic policies).
    :param role: role this mixin serves (kept for API compatibility; JAX has no shared models).
    """

    def __init__(self, clip_actions: bool = False, role: str = "") -> None:
        self._d_clip_actions = bool(clip_actions) and isinstance(self.action_space, gymnasium.spaces.Box)
        if self._d_clip_actions:
            self._d_action_bounds = (
                np.asarray(self.action_space.low, dtype=np.float32).reshape(-1),
                np.asarray(self.action_space.high, dtype=np.float32).reshape(-1),
            )
        self._d_role = role
        flax.linen.Module.__post_init__(self)

    def act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[jax.Array, None, dict]:
        """Compute the output; pure and traceable when ``params`` is given.

        :param inputs: ``"states"`` and, for critics, ``"taken_actions"``.
        :param role: role passed to ``__call__``.
        :param params: parameters to use instead of ``self.state_dict.params``.
        :return: ``(output, None, outputs)``.
        """
        actions, outputs = self._forward(params, inputs, role)
        if self._d_clip_actions:
            actions = _clip(actions, *self._d_action_bounds)
        return actions, None, outputs
