"""Mechanics shared by the JAX algorithms, one function each, all pure and jittable:
GAE, advantage normalisation, TD targets, the polyak update, mini-batch splitting, finite flags, the functional form
of a preprocessor, and scheduler steps.
"""

from typing import Any, Callable, Optional, Tuple

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from skrl_like import config
from skrl_like.jax.resources.optimizers import Adam
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.resources.preprocessors.running_standard_scaler import standardize, update_statistics
from skrl_like.jax.resources.schedulers import KLAdaptiveLR, LinearLR
from skrl_like.jax.utils.distributed import mean_over_processes, moments


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
    :return: ``(returns, advantages)``, advantages normalised by :func:`normalize_advantages`.
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
    return returns, normalize_advantages(advantages)


def normalize_advantages(advantages: jax.Array) -> jax.Array:
    """Zero mean and unit std, the unbiased one (``ddof=1``) as in the torch backend; a single sample has no spread
    and becomes 0 (its std would be NaN).

    In a distributed run the mean and std are those of every process's advantages together, so the update of the
    processes together is that of one process holding all their rollouts."""
    if config.jax.is_distributed:
        _, mean, variance = moments(jnp, advantages, tuple(range(advantages.ndim)))
        return (advantages - mean) / (jnp.sqrt(variance) + 1e-8)
    centred = advantages - advantages.mean()
    if advantages.size < 2:
        return centred
    return centred / (advantages.std(ddof=1) + 1e-8)


def td_targets(rewards: jax.Array, dones: jax.Array, next_values: jax.Array, discount_factor: float) -> jax.Array:
    """One-step TD targets ``r + gamma * (1 - done) * V(s')``; ``dones`` (bool or 0/1) cut the bootstrap (off-policy
    agents pass ``terminated`` only: a truncated step bootstraps from the terminal observation it stored; skrl's
    targets end the bootstrap at a truncation too)."""
    return rewards + discount_factor * (1 - dones.astype(rewards.dtype)) * next_values


def polyak_update(target: Any, source: Any, polyak: Any) -> Any:
    """``polyak * source + (1 - polyak) * target`` leaf by leaf (skrl's rule: ``polyak`` weighs the source)."""
    return optax.incremental_update(source, target, polyak)


def contiguous_mini_batches(tree: Any, mini_batches: int) -> Any:
    """Split every leaf's first axis into ``mini_batches`` contiguous slices of ``samples // mini_batches`` rows
    (the remainder left out, as ``core.agents.schedule.mini_batch_slices``): leaves of shape
    ``(mini_batches, samples // mini_batches, ...)``, ready for a ``lax.scan``."""

    def split(leaf: jax.Array) -> jax.Array:
        size = leaf.shape[0] // mini_batches
        return leaf[: size * mini_batches].reshape(mini_batches, size, *leaf.shape[1:])

    return jax.tree_util.tree_map(split, tree)


def shuffled_mini_batches(key: jax.Array, tree: Any, mini_batches: int) -> Any:
    """:func:`contiguous_mini_batches` of the rows in a random order (the same permutation for every leaf)."""
    permutation = jax.random.permutation(key, jax.tree_util.tree_leaves(tree)[0].shape[0])
    return contiguous_mini_batches(jax.tree_util.tree_map(lambda leaf: leaf[permutation], tree), mini_batches)


def fresh_optimizer(optimizer: Any, params: Any) -> Any:
    """``optimizer`` (an :class:`~skrl_like.jax.resources.optimizers.Adam`) with a new state for ``params``, as if just
    built for them (pure: a compiled run draws one per seed); ``None`` or ``()`` (no optimizer) as it is."""
    if optimizer is None or optimizer == ():
        return optimizer
    return optimizer.replace(state=optimizer.transformation.init(ravel_pytree(params)[0]))


def all_finite(tree: Any) -> jax.Array:
    """A device bool: every leaf of ``tree`` is finite."""
    return jnp.all(jnp.stack([jnp.isfinite(leaf).all() for leaf in jax.tree_util.tree_leaves(tree)]))


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


def make_adam(model: Any, learning_rate: float, schedule: Optional[Callable], grad_norm_clip: float = 0) -> Any:
    """The Adam of one of an agent's models. Every update passes it the learner's rate (traced: a scheduler or
    ``Agent.set_learning_rate`` changes it without recompiling). Without a schedule it scales by the construction
    rate as ``optax.adam`` does (skrl's checkpoint layout) and rescales to the rate passed, exactly 1 while that is
    unchanged; a zero construction rate cannot be rescaled, so that optimizer (as with a schedule) leaves the whole
    scaling to the rate passed."""
    scale = schedule is None and learning_rate != 0
    return Adam(model=model, lr=learning_rate, grad_norm_clip=grad_norm_clip, scale=scale)


def make_scheduler(scheduler: Optional[Callable], kwargs: dict, learner_type: Any = None) -> Optional[Callable]:
    """The schedule built from ``cfg["learning_rate_scheduler"]`` and its kwargs (``None`` if disabled). ``LinearLR``
    counts its steps in the learner state, so it needs a ``learner_type`` with a ``scheduler_steps`` field."""
    if scheduler is LinearLR and "scheduler_steps" not in getattr(learner_type, "_fields", ()):
        raise ValueError(
            f"learning_rate_scheduler: LinearLR needs an agent that counts its scheduler steps, and the learner state "
            f"{getattr(learner_type, '__name__', learner_type)!r} has no 'scheduler_steps' field: add one (as every "
            "JAX agent's learner state has) and step the rates with Agent._scheduled_rates, or use ExponentialLR"
        )
    return scheduler(**kwargs) if scheduler else None


def initial_learning_rate(scheduler: Optional[Callable], schedule: Optional[Callable], learning_rate: float) -> float:
    """The rate an agent starts from: ``LinearLR`` scales it by its start factor when built, as torch's does."""
    return learning_rate * float(schedule(0)) if scheduler is LinearLR else learning_rate


def step_scheduler(
    scheduler: Optional[Callable],
    schedule: Optional[Callable],
    learning_rate: Any,
    timestep: Any,
    kl: Any,
    steps: Any = None,
) -> Any:
    """The learning rate after one scheduler step (traceable): ``KLAdaptiveLR`` adapts it to the KL (in a distributed
    run the processes' mean KL, so every process adapts alike); ``LinearLR`` multiplies it by its factor of step
    ``steps + 1`` (``steps``: the scheduler steps taken before, from the learner state); any other schedule multiplies
    it by ``schedule(timestep)`` (skrl's JAX rule)."""
    if schedule is None:
        return learning_rate
    if scheduler is KLAdaptiveLR:
        return schedule(timestep, learning_rate, mean_over_processes(kl))
    if scheduler is LinearLR:
        return learning_rate * schedule(steps + 1)
    return learning_rate * schedule(timestep)
