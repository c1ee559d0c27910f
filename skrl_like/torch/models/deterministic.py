"""Deterministic models: value functions, Q-functions, deterministic policies, discriminators."""

from typing import Any, Mapping

import torch

from skrl_like.torch.models.base import ActOutput, bad_compute_output, register_action_bounds, require_model_initialised


class DeterministicMixin:
    """Return ``compute``'s output as the action (no sampling, no log-probability).

    :param clip_actions: clamp the output to the bounds of a gymnasium ``action_space`` (deterministic
        policies such as DDPG/TD3 actors).
    :param role: role served by this mixin (informative; shared models dispatch on it in ``act``).
    """

    def __init__(self, clip_actions: bool = False, role: str = "") -> None:
        require_model_initialised(self, "DeterministicMixin")
        self._d_clip_actions = register_action_bounds(self, "_d_", clip_actions)

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Compute the output, optionally clamped to the action bounds.

        :param inputs: ``{"states": ...}`` plus ``"taken_actions"`` for Q-functions.
        :param role: role passed to ``compute``.
        :return: ``(output, None, outputs)``.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            actions, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(self, "DeterministicMixin", role, result, "(output, outputs)") from None
        if self._d_clip_actions:
            actions = torch.clamp(actions, self._d_clip_actions_min, self._d_clip_actions_max)
        return actions, None, outputs
