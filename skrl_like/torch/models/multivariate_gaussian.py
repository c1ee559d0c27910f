"""Multivariate Gaussian policies with a diagonal scale (continuous actions, torch only)."""

import math
from typing import Any, Mapping

import torch
from torch.distributions import MultivariateNormal

from skrl_like.torch.models.base import (
    ActOutput,
    bad_compute_output,
    register_action_bounds,
    require_model_initialised,
)

_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


class MultivariateGaussianMixin:
    """Turn ``compute``'s ``(mean_actions, log_std, outputs)`` into actions from a multivariate normal.

    As in skrl, the matrix ``diag(exp(log_std) ** 2)`` is used as the Cholesky factor (``scale_tril``), so the
    effective covariance is ``diag(std ** 4)``. The scale is diagonal, so sampling and densities are computed
    element-wise; :meth:`distribution` builds the equivalent ``MultivariateNormal`` on demand.

    :param clip_actions: clamp sampled actions to the bounds of a gymnasium ``action_space``.
    :param clip_log_std: clamp the log standard deviation to ``[min_log_std, max_log_std]``.
    :param min_log_std: lower clamp bound.
    :param max_log_std: upper clamp bound.
    :param role: role served by this mixin (informative; shared models dispatch on it in ``act``).
    """

    def __init__(
        self,
        clip_actions: bool = False,
        clip_log_std: bool = True,
        min_log_std: float = -20,
        max_log_std: float = 2,
        role: str = "",
    ) -> None:
        require_model_initialised(self, "MultivariateGaussianMixin")
        self._mg_clip_actions = register_action_bounds(self, "_mg_", clip_actions)
        self._mg_clip_log_std = bool(clip_log_std)
        self._mg_log_std_min = float(min_log_std)
        self._mg_log_std_max = float(max_log_std)
        self._mg_last: dict[str, Any] = {}

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Sample actions (reparameterised) and their joint log-density.

        :param inputs: ``{"states": ...}`` plus optionally ``"taken_actions"`` (their log-density is returned).
        :param role: role passed to ``compute``.
        :return: ``(actions (batch, num_actions), log_prob (batch, 1), outputs)`` with ``"mean_actions"`` added.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            mean_actions, log_std, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(
                self, "MultivariateGaussianMixin", role, result, "(mean_actions, log_std, outputs)"
            ) from None
        if self._mg_clip_log_std:
            log_std = torch.clamp(log_std, self._mg_log_std_min, self._mg_log_std_max)
        log_scale = 2 * log_std  # the diagonal of scale_tril is std ** 2
        scale = log_scale.exp()

        noise = torch.randn_like(mean_actions)
        actions = torch.addcmul(mean_actions, scale, noise)
        if self._mg_clip_actions:
            actions = torch.clamp(actions, self._mg_clip_actions_min, self._mg_clip_actions_max)

        taken_actions = inputs.get("taken_actions")
        if taken_actions is not None:
            standardized = (taken_actions - mean_actions) / scale
        elif self._mg_clip_actions:
            standardized = (actions - mean_actions) / scale
        else:
            standardized = noise
        log_prob = torch.addcmul(-_HALF_LOG_TWO_PI - log_scale, standardized, standardized, value=-0.5)
        log_prob = log_prob.sum(dim=-1, keepdim=True)
        if log_prob.dim() != actions.dim():
            log_prob = log_prob.unsqueeze(-1)

        last = self._mg_last
        last["mean"] = mean_actions
        last["log_std"] = log_std
        last["log_scale"] = log_scale
        last["scale"] = scale
        last["distribution"] = None
        outputs["mean_actions"] = mean_actions
        return actions, log_prob, outputs

    def get_entropy(self, role: str = "") -> torch.Tensor:
        """Entropy ``(batch,)`` of the last distribution (scalar 0 before any ``act``).

        :param role: unused.
        """
        last = self._mg_last
        if not last:
            return torch.tensor(0.0, device=self.device)
        mean = last["mean"]
        constant = mean.shape[-1] * (0.5 + _HALF_LOG_TWO_PI)
        return (constant + last["log_scale"].sum(dim=-1)).expand(mean.shape[:-1])

    def get_log_std(self, role: str = "") -> torch.Tensor:
        """The (clamped) log standard deviation of the last ``act``, one row per sample.

        :param role: unused.
        """
        last = self._mg_last
        return last["log_std"].expand_as(last["mean"]).clone()

    def distribution(self, role: str = "") -> MultivariateNormal | None:
        """The ``MultivariateNormal`` of the last ``act`` (``None`` before any call).

        :param role: unused.
        """
        last = self._mg_last
        if not last:
            return None
        if last["distribution"] is None:
            last["distribution"] = MultivariateNormal(
                last["mean"], scale_tril=torch.diag_embed(last["scale"]), validate_args=False
            )
        return last["distribution"]
