"""How ``Model.random_act`` samples a ``Box`` action space: one rule for both backends (each draws with its own RNG).

Every dimension is drawn from its own bounds:

* both bounds finite: uniform in ``[low, high]``;
* both infinite: standard normal;
* only ``low`` finite: ``low + e``, ``e ~ Exponential(1)``;
* only ``high`` finite: ``high - e``.

So every action is finite and inside the space. The backend draws ``uniform``, ``normal`` and ``exponential``
samples of shape ``(batch, num_actions)`` and combines them with :class:`BoxSampling`'s per-dimension arrays::

    uniform_part = (1 - u) * low + u * high            # never overflows, even for bounds near the float32 limits
    actions = where(is_uniform, uniform_part, where(is_normal, n, origin + direction * e))
    actions = clip(actions, space_low, space_high)   # rounding of the uniform part may cross a bound by one ulp

(skrl 1.4.3 draws every dimension uniformly between the bounds of dimension 0: NaN actions (torch) or an
``OverflowError`` (JAX) where they are infinite, and actions outside the space where dimensions differ.)
"""

from typing import Any, NamedTuple

import numpy as np


class BoxSampling(NamedTuple):
    """Per-dimension arrays (flat, ``float32`` or ``bool``) that the backends turn into tensors once."""

    low: np.ndarray  # finite lower bounds, 0 where infinite
    high: np.ndarray  # finite upper bounds, 0 where infinite
    is_uniform: np.ndarray  # both bounds finite
    is_normal: np.ndarray  # both bounds infinite
    origin: np.ndarray  # the finite bound of a half-bounded dimension, 0 elsewhere
    direction: np.ndarray  # +1 up from ``low``, -1 down from ``high``, 0 elsewhere
    space_low: np.ndarray  # the space's bounds as they are (infinities included), for the final clip
    space_high: np.ndarray
    any_normal: bool
    any_exponential: bool


def box_sampling(space: Any) -> BoxSampling:
    """The arrays that sample ``space`` (a ``gymnasium.spaces.Box``) by the rule of the module docstring."""
    space_low = np.asarray(space.low, dtype=np.float64).reshape(-1)
    space_high = np.asarray(space.high, dtype=np.float64).reshape(-1)
    finite_low, finite_high = np.isfinite(space_low), np.isfinite(space_high)
    low = np.where(finite_low, space_low, 0.0)
    high = np.where(finite_high, space_high, 0.0)
    only_low, only_high = finite_low & ~finite_high, finite_high & ~finite_low
    return BoxSampling(
        low=low.astype(np.float32),
        high=high.astype(np.float32),
        is_uniform=finite_low & finite_high,
        is_normal=~finite_low & ~finite_high,
        origin=np.where(only_low, low, np.where(only_high, high, 0.0)).astype(np.float32),
        direction=(only_low.astype(np.float32) - only_high.astype(np.float32)),
        space_low=space_low.astype(np.float32),
        space_high=space_high.astype(np.float32),
        any_normal=bool(np.any(~finite_low & ~finite_high)),
        any_exponential=bool(np.any(only_low | only_high)),
    )
