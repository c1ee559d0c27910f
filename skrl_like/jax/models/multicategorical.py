"""``MultiCategoricalMixin``: one categorical distribution per component of a ``MultiDiscrete`` action space."""

from collections.abc import Mapping
from functools import partial
from typing import Any, Union

import flax.linen
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.models.base import check_reduction, nan_like, reduce_last_axis
from skrl_like.jax.models.categorical import categorical_entropy, normalized_logits, sample_categorical


def _split_points(sizes: tuple[int, ...]) -> list[int]:
    return np.cumsum(sizes)[:-1].tolist()


@partial(jax.jit, static_argnames=("sizes", "unnormalized_log_prob", "reduction"))
def _multicategorical(
    net_output: jax.Array,
    key: jax.Array,
    taken_actions: jax.Array | None,
    sizes: tuple[int, ...],
    unnormalized_log_prob: bool,
    reduction: str,
) -> tuple[jax.Array, jax.Array]:
    all_logits = jnp.split(net_output, _split_points(sizes), axis=-1)
    actions, log_probs = [], []
    for index, logits in enumerate(all_logits):
        taken = None if taken_actions is None else taken_actions[:, index]
        # an independent key per component: a shared key would correlate the components' samples
        component_actions, component_log_prob = sample_categorical(
            normalized_logits(logits, unnormalized_log_prob), jax.random.fold_in(key, index), taken
        )
        actions.append(component_actions)
        log_probs.append(component_log_prob)
    actions = jnp.concatenate(actions, axis=-1)
    log_prob = reduce_last_axis(jnp.concatenate(log_probs, axis=-1), reduction)
    if log_prob.ndim != actions.ndim:
        log_prob = jnp.expand_dims(log_prob, -1)
    return actions, log_prob


@partial(jax.jit, static_argnames=("sizes", "unnormalized_log_prob", "reduction"))
def _entropy(net_output: jax.Array, sizes: tuple[int, ...], unnormalized_log_prob: bool, reduction: str) -> jax.Array:
    entropies = jnp.stack(
        [
            categorical_entropy(normalized_logits(logits, unnormalized_log_prob))
            for logits in jnp.split(net_output, _split_points(sizes), axis=-1)
        ],
        axis=-1,
    )
    entropy = reduce_last_axis(entropies, reduction)
    return entropy if entropy.ndim == entropies.ndim else jnp.expand_dims(entropy, -1)


class MultiCategoricalMixin:
    """Stochastic policy for ``MultiDiscrete(nvec)`` actions; the network returns ``(net_output, outputs)`` with
    ``net_output`` of shape ``(batch, sum(nvec))``, split into one block of logits per component.

    :param unnormalized_log_prob: ``True`` if the network outputs logits; ``False`` if it outputs probabilities
        (each block non-negative with a non-zero sum).
    :param reduction: how the components' log-probabilities combine: ``"sum"`` (joint), ``"mean"``, ``"prod"``
        or ``"none"`` (keep ``(batch, K)``).
    :param role: role this mixin serves (kept for API compatibility; JAX has no shared models).
    """

    def __init__(self, unnormalized_log_prob: bool = True, reduction: str = "sum", role: str = "") -> None:
        self._mc_unnormalized_log_prob = bool(unnormalized_log_prob)
        self._mc_reduction = check_reduction(reduction)
        self._mc_sizes = tuple(int(size) for size in np.ravel(self.action_space.nvec))
        self._mc_role = role
        flax.linen.Module.__post_init__(self)

    def act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[jax.Array, jax.Array, dict]:
        """Sample one action per component and the (reduced) log-probability.

        Pure and traceable when ``inputs["key"]`` and ``params`` are given.

        :param inputs: ``"states"``; optional ``"taken_actions"`` ``(batch, K)`` and ``"key"``. Not modified.
        :param role: role passed to ``__call__``.
        :param params: parameters to use instead of ``self.state_dict.params``.
        :return: ``(actions (batch, K) int32, log_prob (batch, 1) or (batch, K) with "none", outputs)``, outputs
            holding ``net_output`` and ``stddev`` (NaN).
        """
        inputs, key = self._with_key(inputs, params)
        net_output, outputs = self._forward(params, inputs, role)
        actions, log_prob = _multicategorical(
            net_output,
            key,
            inputs.get("taken_actions"),
            self._mc_sizes,
            self._mc_unnormalized_log_prob,
            self._mc_reduction,
        )
        outputs = dict(outputs)
        outputs["net_output"] = net_output
        outputs["stddev"] = nan_like(log_prob)
        # the most likely class of each component: what evaluation with exploration off plays
        outputs["mean_actions"] = jnp.stack(
            [jnp.argmax(logits, axis=-1) for logits in jnp.split(net_output, _split_points(self._mc_sizes), axis=-1)],
            axis=-1,
        ).astype(jnp.int32)
        return actions, log_prob, outputs

    def get_entropy(self, net_output: Union[jax.Array, Mapping[str, Any]], role: str = "") -> jax.Array:
        """Per-component entropies reduced like the log-probability: ``(batch, 1)`` (``(batch, K)`` with "none").

        :param net_output: ``outputs["net_output"]`` from ``act``, or the whole ``outputs`` dict.
        """
        if isinstance(net_output, Mapping):
            net_output = net_output["net_output"]
        return _entropy(net_output, self._mc_sizes, self._mc_unnormalized_log_prob, self._mc_reduction)
