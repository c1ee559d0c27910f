"""``CategoricalMixin``: a categorical policy over ``Discrete(n)`` actions."""

from collections.abc import Mapping
from functools import partial
from typing import Any, Union

import flax.linen
import jax
import jax.numpy as jnp

from skrl_like.jax.models.base import nan_like


def normalized_logits(net_output: jax.Array, unnormalized_log_prob: bool) -> jax.Array:
    """Log-probabilities from logits (``unnormalized_log_prob``) or from non-negative probabilities."""
    if unnormalized_log_prob:
        return net_output - jax.scipy.special.logsumexp(net_output, axis=-1, keepdims=True)
    probabilities = net_output / jnp.sum(net_output, axis=-1, keepdims=True)
    eps = jnp.finfo(probabilities.dtype).eps
    return jnp.log(jnp.clip(probabilities, min=eps, max=1 - eps))


def sample_categorical(
    logits: jax.Array, key: jax.Array, taken_actions: jax.Array | None
) -> tuple[jax.Array, jax.Array]:
    """Sample ``(batch, 1)`` int32 actions and the ``(batch, 1)`` log-probability of the sample or taken actions.

    Inverse-CDF sampling, as the torch backend: one uniform per row and the first class whose cumulative
    probability reaches it (clamped: the last entry may round to just below 1). Exact, and less work than the
    Gumbel-max trick of ``jax.random.categorical`` (one uniform per class and two logarithms). With
    ``taken_actions`` nothing is sampled.
    """
    log_probabilities = jax.nn.log_softmax(logits, axis=-1)
    if taken_actions is None:
        uniform = jax.random.uniform(key, logits.shape[:-1] + (1,), dtype=logits.dtype)
        below = jnp.cumsum(jnp.exp(log_probabilities), axis=-1) < uniform
        actions = jnp.minimum(jnp.sum(below, axis=-1), logits.shape[-1] - 1).astype(jnp.int32)
    else:
        actions = jnp.reshape(taken_actions, (-1,)).astype(jnp.int32)
    # a select, not take_along_axis: its gradient is a scatter-add, several times slower in a CPU update
    taken = actions[:, None] == jnp.arange(logits.shape[-1])
    log_prob = jnp.sum(jnp.where(taken, log_probabilities, 0.0), axis=-1)
    return actions.reshape(-1, 1), log_prob.reshape(-1, 1)


def categorical_entropy(logits: jax.Array) -> jax.Array:
    """``-sum(p log p)`` over the last axis; logits are normalised and clipped to stay finite (``-inf * 0``)."""
    logits = logits - jax.scipy.special.logsumexp(logits, axis=-1, keepdims=True)
    logits = jnp.clip(logits, min=jnp.finfo(logits.dtype).min)
    return -jnp.sum(jax.nn.softmax(logits, axis=-1) * logits, axis=-1)


@partial(jax.jit, static_argnames=("unnormalized_log_prob",))
def _categorical(
    net_output: jax.Array, key: jax.Array, taken_actions: jax.Array | None, unnormalized_log_prob: bool
) -> tuple[jax.Array, jax.Array]:
    return sample_categorical(normalized_logits(net_output, unnormalized_log_prob), key, taken_actions)


@partial(jax.jit, static_argnames=("unnormalized_log_prob",))
def _entropy(net_output: jax.Array, unnormalized_log_prob: bool) -> jax.Array:
    return categorical_entropy(normalized_logits(net_output, unnormalized_log_prob))


class CategoricalMixin:
    """Stochastic policy for ``Discrete(n)`` actions; the network returns ``(net_output (batch, n), outputs)``.

    :param unnormalized_log_prob: ``True`` if the network outputs logits (any real numbers); ``False`` if it
        outputs probabilities (non-negative, non-zero sum), e.g. after a softmax.
    :param role: role this mixin serves (kept for API compatibility; JAX has no shared models).
    """

    def __init__(self, unnormalized_log_prob: bool = True, role: str = "") -> None:
        self._c_unnormalized_log_prob = bool(unnormalized_log_prob)
        self._c_role = role
        flax.linen.Module.__post_init__(self)

    def act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[jax.Array, jax.Array, dict]:
        """Sample actions and their log-probability.

        Pure and traceable when ``inputs["key"]`` and ``params`` are given.

        :param inputs: ``"states"``; optional ``"taken_actions"`` ``(batch, 1)`` and ``"key"``. Not modified.
        :param role: role passed to ``__call__``.
        :param params: parameters to use instead of ``self.state_dict.params``.
        :return: ``(actions (batch, 1) int32, log_prob (batch, 1), outputs)``, outputs holding ``net_output``
            and ``stddev`` (NaN, for a uniform outputs layout with the Gaussian mixin).
        """
        inputs, key = self._with_key(inputs, params)
        net_output, outputs = self._forward(params, inputs, role)
        actions, log_prob = _categorical(net_output, key, inputs.get("taken_actions"), self._c_unnormalized_log_prob)
        outputs = dict(outputs)
        outputs["net_output"] = net_output
        outputs["stddev"] = nan_like(log_prob)
        # the most likely class: what evaluation with exploration off plays (trainers read "mean_actions")
        outputs["mean_actions"] = jnp.argmax(net_output, axis=-1, keepdims=True).astype(jnp.int32)
        return actions, log_prob, outputs

    def get_entropy(self, net_output: Union[jax.Array, Mapping[str, Any]], role: str = "") -> jax.Array:
        """Entropy ``(batch,)`` of the distribution given by the network output; pure.

        :param net_output: ``outputs["net_output"]`` from ``act``, or the whole ``outputs`` dict.
        """
        if isinstance(net_output, Mapping):
            net_output = net_output["net_output"]
        return _entropy(net_output, self._c_unnormalized_log_prob)
