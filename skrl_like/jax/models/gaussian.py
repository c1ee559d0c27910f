"""``GaussianMixin``: a diagonal Normal policy whose network returns the mean and the log standard deviation."""

from collections.abc import Mapping
from functools import partial
from typing import Any, Union

import flax.linen
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.models.base import check_reduction, reduce_last_axis

_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))


@partial(jax.jit, static_argnames=("reduction",))
def _gaussian(
    mean_actions: jax.Array,
    log_std: jax.Array,
    key: jax.Array,
    taken_actions: jax.Array | None,
    log_std_bounds: tuple[Any, Any],
    action_bounds: tuple[Any, Any],
    reduction: str,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    log_std = jnp.clip(log_std, min=log_std_bounds[0], max=log_std_bounds[1])
    stddev = jnp.exp(log_std)
    noise = jax.random.normal(key, jnp.shape(mean_actions), dtype=jnp.result_type(mean_actions, jnp.float32))
    actions = jnp.clip(mean_actions + stddev * noise, min=action_bounds[0], max=action_bounds[1])
    # the log-density is evaluated at the clipped sample (skrl behaviour) or at the given actions
    evaluated = actions if taken_actions is None else taken_actions
    log_prob = -jnp.square(evaluated - mean_actions) / (2 * jnp.square(stddev)) - log_std - _HALF_LOG_2PI
    log_prob = reduce_last_axis(log_prob, reduction)
    if log_prob.ndim != actions.ndim:
        log_prob = jnp.expand_dims(log_prob, -1)
    return actions, log_prob, log_std, stddev


@jax.jit
def _gaussian_entropy(stddev: jax.Array) -> jax.Array:
    return 0.5 + _HALF_LOG_2PI + jnp.log(stddev)


class GaussianMixin:
    """Stochastic policy for continuous actions: ``actions ~ Normal(mean, exp(log_std))`` per dimension.

    The network (``__call__``) returns ``(mean_actions, log_std, outputs)``; ``log_std`` may be a parameter of
    shape ``(num_actions,)`` (state-independent) or a per-sample array.

    :param clip_actions: clip sampled actions to the bounds of a ``Box`` action space, so the environment only
        sees valid actions (``mean_actions`` in the outputs stays unclipped).
    :param clip_log_std: clip ``log_std`` to ``[min_log_std, max_log_std]`` to keep the distribution well
        conditioned.
    :param min_log_std: lower bound of ``log_std``.
    :param max_log_std: upper bound of ``log_std``.
    :param reduction: how per-dimension log-probabilities combine: ``"sum"`` (joint density), ``"mean"``,
        ``"prod"`` or ``"none"`` (keep ``(batch, num_actions)``).
    :param role: role this mixin serves (kept for API compatibility; JAX has no shared models).
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
        self._g_clip_actions = bool(clip_actions) and isinstance(self.action_space, gymnasium.spaces.Box)
        if self._g_clip_actions:
            self._g_action_bounds = (
                np.asarray(self.action_space.low, dtype=np.float32).reshape(-1),
                np.asarray(self.action_space.high, dtype=np.float32).reshape(-1),
            )
        else:  # disabled clipping is clipping to infinite bounds: one code path, nothing to branch on in jit
            self._g_action_bounds = (-np.inf, np.inf)
        self._g_clip_log_std = bool(clip_log_std)
        self._g_log_std_bounds = (float(min_log_std), float(max_log_std)) if clip_log_std else (-np.inf, np.inf)
        self._g_reduction = check_reduction(reduction)
        self._g_role = role
        flax.linen.Module.__post_init__(self)

    def act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[jax.Array, jax.Array, dict]:
        """Sample actions and their log-probability.

        Pure and traceable when ``inputs["key"]`` and ``params`` are given (use it inside ``jax.jit``); otherwise
        the key comes from the model's own stream and the params from ``self.state_dict``.

        :param inputs: ``"states"`` ``(batch, num_observations)``; optional ``"taken_actions"`` (log-prob of these
            instead of the sample) and ``"key"``. The dict is not modified.
        :param role: role passed to ``__call__``.
        :param params: parameters to use instead of ``self.state_dict.params`` (e.g. the ones being differentiated).
        :return: ``(actions (batch, num_actions), log_prob (batch, 1) or (batch, num_actions) with "none",
            outputs)``, outputs holding ``mean_actions``, ``log_std`` (clipped) and ``stddev``.
        """
        inputs, key = self._with_key(inputs, params)
        mean_actions, log_std, outputs = self._forward(params, inputs, role)
        actions, log_prob, log_std, stddev = _gaussian(
            mean_actions,
            log_std,
            key,
            inputs.get("taken_actions"),
            self._g_log_std_bounds,
            self._g_action_bounds,
            self._g_reduction,
        )
        outputs = dict(outputs)
        outputs["mean_actions"] = mean_actions
        outputs["log_std"] = log_std
        outputs["stddev"] = stddev
        return actions, log_prob, outputs

    def get_entropy(self, stddev: Union[jax.Array, Mapping[str, Any]], role: str = "") -> jax.Array:
        """Per-dimension entropy ``0.5 + 0.5 log(2 pi) + log(stddev)``; pure.

        :param stddev: ``outputs["stddev"]`` from ``act``, or the whole ``outputs`` dict.
        """
        if isinstance(stddev, Mapping):
            stddev = stddev["stddev"]
        return _gaussian_entropy(stddev)
