"""Diagonal Gaussian policies (continuous actions): PPO, A2C, SAC, TRPO, RPO..."""

import math
from typing import Any, Mapping

import torch
from torch.distributions import Normal

from skrl_like.torch.models.base import (
    ActOutput,
    bad_compute_output,
    reduction_function,
    register_action_bounds,
    require_model_initialised,
)

_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


class GaussianMixin:
    """Turn ``compute``'s ``(mean_actions, log_std, outputs)`` into sampled actions and their log-density.

    ``compute`` must return the mean ``(batch, num_actions)`` and a log standard deviation that broadcasts to
    it (a ``(num_actions,)`` parameter or a per-sample tensor).

    :param clip_actions: clamp sampled actions to the bounds of a gymnasium ``action_space`` (the log-density is
        then that of the clamped action; ``outputs["mean_actions"]`` is never clamped).
    :param clip_log_std: clamp the log standard deviation to ``[min_log_std, max_log_std]`` to keep the
        distribution from collapsing or exploding.
    :param min_log_std: lower clamp bound.
    :param max_log_std: upper clamp bound.
    :param reduction: how per-dimension log-densities become one per sample: ``"sum"`` (joint density of
        independent dimensions), ``"mean"``, ``"prod"`` or ``"none"`` (keep ``(batch, num_actions)``).
    :param role: role served by this mixin (informative; shared models dispatch on it in ``act``).
    """

    def __init__(
        self,
        clip_actions: bool = False,
        clip_log_std: bool = True,
        min_log_std: float = -20,
        max_log_std: float = 2,
        reduction: str = "sum",
        role: str = "",
    ) -> None:
        require_model_initialised(self, "GaussianMixin")
        self._g_clip_actions = register_action_bounds(self, "_g_", clip_actions)
        self._g_clip_log_std = bool(clip_log_std)
        self._g_log_std_min = float(min_log_std)
        self._g_log_std_max = float(max_log_std)
        self._g_reduction = reduction_function(reduction)
        # tensors of the last act call; a plain dict so that per-step writes skip nn.Module.__setattr__
        self._g_last: dict[str, Any] = {}

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Sample actions (reparameterised, so gradients reach the mean and log-std) and their log-density.

        :param inputs: ``{"states": ...}`` plus optionally ``"taken_actions"``, whose log-density is returned
            instead of the sampled actions'.
        :param role: role passed to ``compute``.
        :return: ``(actions (batch, num_actions), log_prob (batch, 1), outputs)`` with
            ``outputs["mean_actions"]`` added.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            mean_actions, log_std, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(self, "GaussianMixin", role, result, "(mean_actions, log_std, outputs)") from None
        if self._g_clip_log_std:
            log_std = torch.clamp(log_std, self._g_log_std_min, self._g_log_std_max)
        std = log_std.exp()

        noise = torch.randn_like(mean_actions)
        actions = torch.addcmul(mean_actions, std, noise)
        if self._g_clip_actions:
            actions = torch.clamp(actions, self._g_clip_actions_min, self._g_clip_actions_max)

        taken_actions = inputs.get("taken_actions")
        if taken_actions is not None:
            standardized = (taken_actions - mean_actions) / std
        elif self._g_clip_actions:
            standardized = (actions - mean_actions) / std
        else:
            standardized = noise  # (actions - mean) / std, without recomputing it
        # log N(a; mean, std) = -z^2 / 2 - log(std) - log(2 pi) / 2
        log_prob = torch.addcmul(-_HALF_LOG_TWO_PI - log_std, standardized, standardized, value=-0.5)
        if self._g_reduction is not None:
            log_prob = self._g_reduction(log_prob, dim=-1, keepdim=True)
        if log_prob.dim() != actions.dim():
            log_prob = log_prob.unsqueeze(-1)

        last = self._g_last
        last["mean"] = mean_actions
        last["log_std"] = log_std
        last["std"] = std
        last["distribution"] = None
        outputs["mean_actions"] = mean_actions
        return actions, log_prob, outputs

    def get_entropy(self, role: str = "") -> torch.Tensor:
        """Per-dimension entropy ``(batch, num_actions)`` of the last distribution (scalar 0 before any ``act``).

        :param role: unused (kept for the role-aware call convention).
        """
        last = self._g_last
        if not last:
            return torch.tensor(0.0, device=self.device)
        return (_HALF_LOG_TWO_PI + 0.5) + last["log_std"].expand_as(last["mean"])

    def get_log_std(self, role: str = "") -> torch.Tensor:
        """The (clamped) log standard deviation of the last ``act``, one row per sample.

        :param role: unused.
        """
        last = self._g_last
        return last["log_std"].expand_as(last["mean"]).clone()

    def distribution(self, role: str = "") -> Normal | None:
        """The ``torch.distributions.Normal`` of the last ``act`` (``None`` before any call).

        :param role: unused.
        """
        last = self._g_last
        if not last:
            return None
        if last["distribution"] is None:
            last["distribution"] = Normal(last["mean"], last["std"], validate_args=False)
        return last["distribution"]
