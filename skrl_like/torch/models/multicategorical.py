"""Multi-categorical policies (one ``MultiDiscrete`` action: several independent categorical components)."""

from typing import Any, Mapping

import numpy as np
import torch
from torch.distributions import Categorical

from skrl_like.torch.models.base import (
    ActOutput,
    bad_compute_output,
    reduction_function,
    require_model_initialised,
)
from skrl_like.torch.models.categorical import entropy_from, normalized_log_probabilities, sample_classes


class MultiCategoricalMixin:
    """Turn ``compute``'s ``(net_output, outputs)`` into one sampled index per ``MultiDiscrete`` component.

    ``net_output`` holds the components' logits (or probabilities) side by side: ``(batch, sum(nvec))``. The
    components are handled together as one padded ``(batch, K, max(nvec))`` tensor, so ``act`` costs the same
    few tensor operations whatever the number of components.

    :param unnormalized_log_prob: ``True`` when ``net_output`` holds logits; ``False`` for probabilities.
    :param reduction: how the components' log-probabilities (and entropies) become one per sample: ``"sum"``
        (joint probability of independent components), ``"mean"``, ``"prod"`` or ``"none"``.
    :param role: role served by this mixin (informative; shared models dispatch on it in ``act``).
    """

    def __init__(self, unnormalized_log_prob: bool = True, reduction: str = "sum", role: str = "") -> None:
        require_model_initialised(self, "MultiCategoricalMixin")
        nvec = getattr(self.action_space, "nvec", None)
        if nvec is None:
            raise ValueError(
                f"MultiCategoricalMixin needs a gymnasium MultiDiscrete action space, got {self.action_space!r}: "
                "use CategoricalMixin for a single Discrete action"
            )
        sizes = [int(size) for size in np.asarray(nvec).reshape(-1)]
        self._mc_unnormalized_log_prob = bool(unnormalized_log_prob)
        self._mc_reduction = reduction_function(reduction)
        self._mc_sizes = sizes
        self._mc_shape = (len(sizes), max(sizes))
        self._mc_equal_sizes = len(set(sizes)) == 1
        # padded layout: component k occupies row k, its classes the first nvec[k] columns; padding columns
        # get probability 0 (logit -inf) so they are never sampled and add nothing to the entropy
        width = self._mc_shape[1]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        columns = np.arange(width)
        padding = columns[None, :] >= np.asarray(sizes)[:, None]
        index = np.where(padding, 0, starts[:, None] + columns[None, :]).reshape(-1)
        self.register_buffer("_mc_index", torch.as_tensor(index, dtype=torch.long, device=self.device), False)
        self.register_buffer("_mc_padding", torch.as_tensor(padding, device=self.device), False)
        self._mc_padding_value = float("-inf") if unnormalized_log_prob else 0.0
        self._mc_last: dict[str, Any] = {}

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Sample every component and return the reduced log-probability.

        :param inputs: ``{"states": ...}`` plus optionally ``"taken_actions"`` ``(batch, K)``.
        :param role: role passed to ``compute``.
        :return: ``(actions (batch, K) int64, log_prob (batch, 1) or (batch, K) with "none", outputs)`` with
            ``"net_output"`` and ``"mean_actions"`` (the most likely class of each component, ``(batch, K)``) added.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            net_output, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(self, "MultiCategoricalMixin", role, result, "(net_output, outputs)") from None
        if self._mc_equal_sizes:
            padded = net_output.unflatten(-1, self._mc_shape)
        else:
            padded = (
                net_output.index_select(-1, self._mc_index)
                .unflatten(-1, self._mc_shape)
                .masked_fill(self._mc_padding, self._mc_padding_value)
            )
        probs, log_probs = normalized_log_probabilities(padded, self._mc_unnormalized_log_prob)
        actions = sample_classes(probs).squeeze(-1)  # padded classes have probability 0: never drawn

        taken_actions = inputs.get("taken_actions")
        index = actions if taken_actions is None else taken_actions.reshape(actions.shape).long()
        log_prob = log_probs.gather(-1, index.unsqueeze(-1)).squeeze(-1)
        if self._mc_reduction is not None:
            log_prob = self._mc_reduction(log_prob, dim=-1, keepdim=True)
        if log_prob.dim() != actions.dim():
            log_prob = log_prob.unsqueeze(-1)

        last = self._mc_last
        last["probs"] = probs
        last["log_probs"] = log_probs
        last["distribution"] = None
        outputs["net_output"] = net_output
        # the most likely class of each component: what evaluation with exploration off plays
        outputs["mean_actions"] = log_probs.argmax(dim=-1)
        return actions, log_prob, outputs

    def get_entropy(self, role: str = "") -> torch.Tensor:
        """Entropy of the last distributions: ``(batch, 1)`` reduced, ``(batch, K)`` with ``reduction="none"``
        (scalar 0 before any ``act``).

        :param role: unused.
        """
        last = self._mc_last
        if not last:
            return torch.tensor(0.0, device=self.device)
        entropy = entropy_from(last["probs"], last["log_probs"])
        if self._mc_reduction is not None:
            entropy = self._mc_reduction(entropy, dim=-1, keepdim=True)
        return entropy

    def distribution(self, role: str = "") -> Categorical | None:
        """The ``Categorical`` of the **first** component of the last ``act`` (as skrl; ``None`` before any call).

        :param role: unused.
        """
        last = self._mc_last
        if not last:
            return None
        if last["distribution"] is None:
            size = self._mc_sizes[0]
            if self._mc_unnormalized_log_prob:
                last["distribution"] = Categorical(logits=last["log_probs"][..., 0, :size], validate_args=False)
            else:
                last["distribution"] = Categorical(probs=last["probs"][..., 0, :size], validate_args=False)
        return last["distribution"]
