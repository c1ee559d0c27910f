"""Categorical policies (one ``Discrete`` action)."""

from typing import Any, Mapping

import torch
from torch.distributions import Categorical

from skrl_like.torch.models.base import ActOutput, bad_compute_output, require_model_initialised


def normalized_log_probabilities(net_output: torch.Tensor, unnormalized_log_prob: bool) -> tuple:
    """Class probabilities and log-probabilities over the last axis, as ``torch.distributions.Categorical``
    derives them (logits are normalised; probabilities are normalised and clamped to ``[eps, 1 - eps]``
    before the logarithm).

    :param net_output: logits or (unnormalised) probabilities.
    :param unnormalized_log_prob: whether ``net_output`` holds logits.
    :return: ``(probabilities, log_probabilities)``.
    """
    if unnormalized_log_prob:
        log_probs = torch.log_softmax(net_output, dim=-1)
        return log_probs.exp(), log_probs
    probs = net_output / net_output.sum(dim=-1, keepdim=True)
    eps = torch.finfo(probs.dtype).eps
    return probs, probs.clamp(eps, 1 - eps).log()


def entropy_from(probs: torch.Tensor, log_probs: torch.Tensor) -> torch.Tensor:
    """``-sum(p log p)`` over the last axis, with classes of probability 0 (``-inf`` logits, padding) counting 0.

    Masking ``log p`` to 0 where ``p == 0`` (rather than clamping it to the float minimum) keeps the gradient
    finite: with a clamp, ``d(p log p)/dp`` is the float minimum, which any scale above 1 turns into ``inf * 0``.

    :param probs: class probabilities.
    :param log_probs: their logarithms.
    """
    return -(torch.where(probs > 0, log_probs, 0.0) * probs).sum(dim=-1)


def sample_classes(probs: torch.Tensor) -> torch.Tensor:
    """One class index per row, ``(..., 1)`` int64, by inverse-CDF sampling.

    Exact (class ``k`` is drawn when ``cdf[k-1] < u <= cdf[k]``) and about three times cheaper than
    ``torch.multinomial`` for the small batches of an environment step; the clamp covers a last CDF entry
    that rounds to just below ``u``.
    """
    uniform = torch.rand(probs.shape[:-1] + (1,), device=probs.device, dtype=probs.dtype)
    return torch.searchsorted(probs.cumsum(dim=-1), uniform).clamp_(max=probs.shape[-1] - 1)


class CategoricalMixin:
    """Turn ``compute``'s ``(net_output, outputs)`` into a sampled class index and its log-probability.

    :param unnormalized_log_prob: ``True`` when ``net_output`` holds logits (any real numbers); ``False`` when
        it holds non-negative class probabilities (normalised here).
    :param role: role served by this mixin (informative; shared models dispatch on it in ``act``).
    """

    def __init__(self, unnormalized_log_prob: bool = True, role: str = "") -> None:
        require_model_initialised(self, "CategoricalMixin")
        self._c_unnormalized_log_prob = bool(unnormalized_log_prob)
        self._c_last: dict[str, Any] = {}

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Sample one class per row and return its log-probability.

        :param inputs: ``{"states": ...}`` plus optionally ``"taken_actions"`` (``(batch, 1)`` or ``(batch,)``
            class indices whose log-probability is returned instead).
        :param role: role passed to ``compute``.
        :return: ``(actions (batch, 1) int64, log_prob (batch, 1), outputs)`` (the actions are the taken ones when
            ``"taken_actions"`` is given) with ``"net_output"`` and
            ``"mean_actions"`` (the most likely class, ``(batch, 1)``) added.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            net_output, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(self, "CategoricalMixin", role, result, "(net_output, outputs)") from None
        probs, log_probs = normalized_log_probabilities(net_output, self._c_unnormalized_log_prob)
        taken_actions = inputs.get("taken_actions")
        if taken_actions is None:
            actions = sample_classes(probs)
        else:  # evaluating given actions (learning): nothing to sample
            actions = taken_actions.reshape(probs.shape[:-1] + (1,)).long()
        log_prob = log_probs.gather(-1, actions)

        last = self._c_last
        last["probs"] = probs
        last["log_probs"] = log_probs
        last["distribution"] = None
        outputs["net_output"] = net_output
        # the most likely class: what evaluation with exploration off plays (trainers read "mean_actions")
        outputs["mean_actions"] = log_probs.argmax(dim=-1, keepdim=True)
        return actions, log_prob, outputs

    def get_entropy(self, role: str = "") -> torch.Tensor:
        """Entropy ``(batch,)`` of the last distribution (scalar 0 before any ``act``).

        :param role: unused.
        """
        last = self._c_last
        if not last:
            return torch.tensor(0.0, device=self.device)
        return entropy_from(last["probs"], last["log_probs"])

    def distribution(self, role: str = "") -> Categorical | None:
        """The ``torch.distributions.Categorical`` of the last ``act`` (``None`` before any call).

        :param role: unused.
        """
        last = self._c_last
        if not last:
            return None
        if last["distribution"] is None:
            if self._c_unnormalized_log_prob:
                last["distribution"] = Categorical(logits=last["log_probs"], validate_args=False)
            else:
                last["distribution"] = Categorical(probs=last["probs"], validate_args=False)
        return last["distribution"]
