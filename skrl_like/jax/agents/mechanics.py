"""Mechanics shared by the JAX algorithms, one function each, all pure and jittable:
GAE, the functional form of a preprocessor, and scheduler steps.
"""

from typing import Any, Callable, Optional, Tuple

import jax
import jax.numpy as jnp

from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.resources.preprocessors.running_standard_scaler import standardize, update_statistics
from skrl_like.jax.resources.schedulers import KLAdaptiveLR


def compute_gae(
    rewards: jax.Array,
    dones: jax.Array,
    values: jax.Array,
    next_values: jax.Array,
    discount_factor: float = 0.99,
    lambda_coefficient: float = 0.95,
) -> Tuple[jax.Array, jax.Array]:
    """Generalized advantage estimation over a time-major rollout (a reverse ``lax.scan``).

    :param rewards: ``(T, N, 1)`` rewards.
    :param dones: ``(T, N, 1)`` ``terminated | truncated`` (0/1): no bootstrap across an episode end.
    :param values: ``(T, N, 1)`` value estimates of the visited states.
    :param next_values: ``(N, 1)`` value estimate of the state after the last step.
    :return: ``(returns, advantages)``, advantages normalised to zero mean and unit std. The std is the
        unbiased one (``ddof=1``), as in the torch backend, so both backends compute the same update.
    """
    not_dones = 1.0 - dones.astype(values.dtype)
    following_values = jnp.concatenate([values[1:], next_values[None]], axis=0)

    def step(advantage: jax.Array, inputs: Tuple[jax.Array, ...]) -> Tuple[jax.Array, jax.Array]:
        reward, value, next_value, not_done = inputs
        advantage = reward - value + discount_factor * not_done * (next_value + lambda_coefficient * advantage)
        return advantage, advantage

    _, advantages = jax.lax.scan(
        step, jnp.zeros_like(next_values), (rewards, values, following_values, not_dones), reverse=True
    )
    returns = advantages + values
    advantages = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)
    return returns, advantages


class FunctionalPreprocessor:
    """A preprocessor as explicit state plus a pure function, so it can run inside a jitted update.

    ``RunningStandardScaler`` (or nothing, the identity) is supported: its statistics are the state.

    :param preprocessor: a ``RunningStandardScaler`` or ``None``.
    """

    def __init__(self, preprocessor: Optional[RunningStandardScaler]) -> None:
        if preprocessor is not None and not isinstance(preprocessor, RunningStandardScaler):
            raise TypeError(
                f"The JAX agents run their update as one compiled function and support RunningStandardScaler "
                f"(or None) as preprocessor, not {type(preprocessor).__name__}"
            )
        self.preprocessor = preprocessor

    @property
    def state(self) -> Any:
        """The statistics ``(mean, variance, count)`` (``()`` for the identity)."""
        if self.preprocessor is None:
            return ()
        return (self.preprocessor.running_mean, self.preprocessor.running_variance, self.preprocessor.current_count)

    @state.setter
    def state(self, value: Any) -> None:
        if self.preprocessor is not None:
            mean, variance, count = value
            self.preprocessor.state_dict = {"running_mean": mean, "running_variance": variance, "current_count": count}

    def __call__(self, state: Any, x: jax.Array, train: Any = False, inverse: bool = False) -> Tuple[Any, jax.Array]:
        """Pure: ``(new_state, transformed x)``. ``train`` may be traced (a bool array)."""
        if self.preprocessor is None:
            return state, x
        if train is not False:
            updated = update_statistics(jnp, *state, x)
            state = jax.tree_util.tree_map(lambda new, old: jnp.where(train, new, old), updated, state)
        mean, variance, _ = state
        epsilon, clip_threshold = self.preprocessor.epsilon, self.preprocessor.clip_threshold
        return state, standardize(jnp, x, mean, variance, epsilon, clip_threshold, inverse)


def make_scheduler(scheduler: Optional[Callable], kwargs: dict) -> Optional[Callable]:
    """The schedule built from ``cfg["learning_rate_scheduler"]`` and its kwargs (``None`` if disabled)."""
    return scheduler(**kwargs) if scheduler else None


def step_scheduler(
    scheduler: Optional[Callable], schedule: Optional[Callable], learning_rate: Any, timestep: Any, kl: Any
) -> Any:
    """The learning rate after one scheduler step (traceable): ``KLAdaptiveLR`` adapts it to the KL; any other
    schedule multiplies it by ``schedule(timestep)`` (skrl's JAX rule)."""
    if schedule is None:
        return learning_rate
    if scheduler is KLAdaptiveLR:
        return schedule(timestep, learning_rate, kl)
    return learning_rate * schedule(timestep)
