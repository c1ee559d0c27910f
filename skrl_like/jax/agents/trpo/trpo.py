"""Trust Region Policy Optimization (TRPO), JAX backend.

Schulman et al., "Trust Region Policy Optimization", 2015. skrl 1.4.3 has TRPO in torch only; this is the same
algorithm with the same config, written the PureJaxRL way: a whole update is one jitted pure function of explicit
state (the on-policy half, :class:`~skrl_like.jax.agents.on_policy.OnPolicyAgent`). It takes the rollout with
log pi_old(a|s), values, GAE returns and advantages from there, makes one natural-gradient step of the policy on the
whole rollout (conjugate gradient on Fisher-vector products in a ``fori_loop``, the backtracking line search under
the KL constraint in a ``while_loop``), then fits the value function over ``learning_epochs`` x ``mini_batches``
contiguous mini-batches with its Adam. Shapes are static, so nothing recompiles after the first update.
"""

from typing import Any, Callable, Dict, NamedTuple, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from skrl_like.core.agents.checks import (
    check_named_flags,
    check_rollout_memory,
    non_finite_note,
    rollout_flag_names,
    step_flag_names,
)
from skrl_like.core.agents.trpo import IGNORED_KEYS, TRPO_DEFAULT_CONFIG, check_trpo_models  # JAX adds no keys
from skrl_like.jax.agents.mechanics import all_finite, contiguous_mini_batches
from skrl_like.jax.agents.on_policy import UNUSED_KEY, LearnerState, Losses, OnPolicyAgent, Rollout, RolloutBatch
from skrl_like.jax.models import GaussianMixin
from skrl_like.jax.utils.distributed import mean_over_processes

__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG", "conjugate_gradient", "gaussian_kl", "line_search"]

# the tolerance on r . r at which conjugate gradient stops (skrl's)
RESIDUAL_TOLERANCE = 1e-10


def gaussian_kl(mean_1: jax.Array, log_std_1: jax.Array, mean_2: jax.Array, log_std_2: jax.Array) -> jax.Array:
    """KL(N(mean_1, std_1) || N(mean_2, std_2)) of diagonal Gaussians: summed over the action dimensions, averaged
    over the rows."""
    kl = log_std_2 - log_std_1 + (jnp.exp(2 * log_std_1) + jnp.square(mean_1 - mean_2)) / (2 * jnp.exp(2 * log_std_2))
    return (kl - 0.5).sum(axis=-1).mean()


def conjugate_gradient(
    matrix_vector_product: Callable[[jax.Array], jax.Array],
    b: jax.Array,
    iterations: int,
    tolerance: float = RESIDUAL_TOLERANCE,
) -> jax.Array:
    """Approximately solve ``A x = b`` for a symmetric positive-definite ``A`` given as ``v -> A v`` (pure): at most
    ``iterations`` steps from ``x = 0``, stopping once the squared residual is below ``tolerance``."""

    def step(_: Any, carry: Tuple[jax.Array, ...]) -> Tuple[jax.Array, ...]:
        x, residual, direction, residual_norm, active = carry
        product = matrix_vector_product(direction)
        alpha = jnp.where(active, residual_norm / (direction @ product), 0.0)
        x = x + alpha * direction
        residual = residual - alpha * product
        new_residual_norm = residual @ residual
        active = jnp.logical_and(active, new_residual_norm >= tolerance)
        beta = jnp.where(active, new_residual_norm / residual_norm, 0.0)
        direction = jnp.where(active, residual + beta * direction, direction)
        residual_norm = jnp.where(active, new_residual_norm, residual_norm)
        return x, residual, direction, residual_norm, active

    carry = (jnp.zeros_like(b), b, b, b @ b, jnp.ones((), bool))
    return jax.lax.fori_loop(0, iterations, step, carry)[0]


class Trial(NamedTuple):
    """What the line search learns of one trial point: the surrogate, the KL to the start and a tracked value."""

    surrogate: jax.Array
    kl: jax.Array
    stddev: jax.Array


def line_search(
    evaluate: Callable[[jax.Array], Trial],
    start: jax.Array,
    full_step: jax.Array,
    expected_improvement: jax.Array,
    start_trial: Trial,
    max_kl_divergence: float,
    accept_ratio: float,
    step_fraction: float,
    max_backtrack_steps: int,
) -> Tuple[jax.Array, jax.Array, Trial]:
    """Backtracking line search (pure): the first ``start + fraction * full_step``, ``fraction = step_fraction *
    0.5**k`` for ``k < max_backtrack_steps``, with a KL below ``max_kl_divergence`` and an improvement of the
    surrogate above ``accept_ratio`` of ``fraction * expected_improvement``; ``start`` when none is.
    Returns ``(parameters, accepted, trial at the parameters)``."""

    def searching(carry: Tuple[Any, ...]) -> jax.Array:
        trial, accepted = carry[:2]
        return jnp.logical_and(trial < max_backtrack_steps, jnp.logical_not(accepted))

    def try_fraction(carry: Tuple[Any, ...]) -> Tuple[Any, ...]:
        trial, _, parameters, chosen = carry
        fraction = step_fraction * jnp.power(0.5, trial)
        candidate = start + fraction * full_step
        result = evaluate(candidate)
        ratio = (result.surrogate - start_trial.surrogate) / (fraction * expected_improvement)
        accepted = jnp.logical_and(result.kl < max_kl_divergence, ratio > accept_ratio)
        parameters = jnp.where(accepted, candidate, parameters)
        chosen = jax.tree_util.tree_map(lambda new, old: jnp.where(accepted, new, old), result, chosen)
        return trial + 1, accepted, parameters, chosen

    carry = (jnp.zeros((), jnp.int32), jnp.zeros((), bool), start, start_trial)
    _, accepted, parameters, chosen = jax.lax.while_loop(searching, try_fraction, carry)
    return parameters, accepted, chosen


class TRPOReport(NamedTuple):
    """What an update tells the host (the fields of ``UpdateReport``, with the policy step's own flags)."""

    losses: Losses
    stddev: jax.Array
    learning_rate: jax.Array
    rollout_finite: jax.Array
    policy_finite: jax.Array  # the surrogate, then the policy parameters after the line search
    step_finite: jax.Array  # (epochs, mini_batches, 2): the value loss, then the value parameters after the step


class TRPO(OnPolicyAgent):
    """Trust Region Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``): a
        Gaussian policy (``GaussianMixin``: the step needs its mean and log standard deviation) and a separate value
        model.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``TRPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    _loss_terms = ("value",)
    learning_rate_fields = {"value_learning_rate": "learning_rate"}  # the policy takes no rate
    default_config = TRPO_DEFAULT_CONFIG
    ignored_config_keys = IGNORED_KEYS

    def _setup(self) -> None:
        cfg = self.cfg
        check_trpo_models(self.models, GaussianMixin)
        # only the value function has an optimizer: the policy moves by the natural-gradient step
        self._setup_on_policy(optimized=("value",))
        if self.memory is not None:
            check_rollout_memory("TRPO", self.memory, cfg["rollouts"], cfg["mini_batches"])

    # -- the policy step (pure) ---------------------------------------------------------------------------------

    def _evaluate_policy(self, params: Any, inputs: dict, actions, old_log_prob, advantages) -> Tuple[jax.Array, ...]:
        """``(surrogate, mean_actions, log_std)`` of the policy with ``params`` on the rollout."""
        _, log_prob, outputs = self.policy.act({**inputs, "taken_actions": actions}, role="policy", params=params)
        surrogate = (advantages * jnp.exp(log_prob - old_log_prob)).mean()
        mean_actions = outputs["mean_actions"]
        return surrogate, mean_actions, jnp.broadcast_to(outputs["log_std"], mean_actions.shape)

    def _policy_step(
        self, params: Any, inputs: dict, actions, old_log_prob, advantages
    ) -> Tuple[Any, jax.Array, Trial]:
        """One natural-gradient step of the policy within the trust region, on the rollout's policy ``inputs``:
        ``(params, surrogate before the step, trial)``, the trial at the new parameters (the start's when no step
        was accepted)."""
        cfg = self.cfg
        start, unravel = ravel_pytree(params)

        def surrogate_and_distribution(flat: jax.Array) -> Tuple[jax.Array, ...]:
            return self._evaluate_policy(unravel(flat), inputs, actions, old_log_prob, advantages)

        # in a distributed run the gradient, the curvature products and the line search's surrogate and KL are means
        # over the processes: every process takes the same step, the one for all their samples together
        surrogate, old_mean, old_log_std = surrogate_and_distribution(start)
        surrogate = mean_over_processes(surrogate)
        policy_gradient = mean_over_processes(jax.grad(lambda flat: surrogate_and_distribution(flat)[0])(start))

        def kl_to_start(flat: jax.Array) -> jax.Array:
            _, mean_actions, log_std = surrogate_and_distribution(flat)
            return gaussian_kl(old_mean, old_log_std, mean_actions, log_std)

        # F v = d/dθ (dKL/dθ . v) + damping v: the KL gradient linearised once at the start, reused by every product
        _, hessian_vector_product = jax.linearize(jax.grad(kl_to_start), start)

        def fisher_vector_product(vector: jax.Array) -> jax.Array:
            return mean_over_processes(hessian_vector_product(vector)) + cfg["damping"] * vector

        search_direction = conjugate_gradient(fisher_vector_product, policy_gradient, cfg["conjugate_gradient_steps"])
        # the largest step along the direction whose quadratic KL model equals max_kl_divergence
        curvature = search_direction @ fisher_vector_product(search_direction)
        full_step = jnp.sqrt(2 * cfg["max_kl_divergence"] / curvature) * search_direction

        def evaluate(flat: jax.Array) -> Trial:
            surrogate, mean_actions, log_std = surrogate_and_distribution(flat)
            kl = gaussian_kl(old_mean, old_log_std, mean_actions, log_std)
            surrogate, kl = mean_over_processes((surrogate, kl))
            return Trial(surrogate, kl, jnp.exp(log_std).mean())

        flat, accepted, trial = line_search(
            evaluate,
            start,
            full_step,
            policy_gradient @ full_step,
            Trial(surrogate, jnp.zeros(()), jnp.exp(old_log_std).mean()),
            cfg["max_kl_divergence"],
            cfg["accept_ratio"],
            cfg["step_fraction"],
            cfg["max_backtrack_steps"],
        )
        return unravel(flat), surrogate, trial

    # -- the update (pure) --------------------------------------------------------------------------------------

    def _learn(self, learner: LearnerState, rollout: Rollout, timestep: jax.Array) -> Tuple[LearnerState, TRPOReport]:
        """The whole update as one pure function: ``(new learner state, report)``."""
        cfg = self.cfg
        learner, batch, rollout_finite = self._rollout_batch(learner, rollout)

        # the state statistics are updated with the whole rollout, then again in the first value epoch (skrl)
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        stored_states, batch = batch.states, batch._replace(states=states)
        policy, policy_loss, trial = self._policy_step(
            learner.policy, self._update_inputs(batch), batch.actions, batch.log_prob, batch.advantages
        )
        learner = learner._replace(policy=policy, state_preprocessor=statistics)
        policy_finite = jnp.stack([jnp.isfinite(policy_loss), all_finite(policy)])

        def value_loss(value_params: Any, rows: Any) -> jax.Array:
            inputs = self._value_inputs(self._update_inputs(rows), rows, UNUSED_KEY)
            predicted_values, _, _ = self.value.act(inputs, role="value", params=value_params)
            return cfg["value_loss_scale"] * jnp.mean((rows.returns - predicted_values) ** 2)

        def mini_batch_step(carry: Tuple[LearnerState, jax.Array], rows: RolloutBatch) -> Tuple[Any, jax.Array]:
            learner, first_epoch = carry
            statistics, states = self._state_functional(learner.state_preprocessor, rows.states, train=first_epoch)
            learner, rows = self._preprocess_privileged(learner, rows._replace(states=states), first_epoch)
            loss, grads = jax.value_and_grad(value_loss)(learner.value, rows)
            value_optimizer, value = learner.value_optimizer.update(grads, learner.value, learner.learning_rate)
            learner = learner._replace(value=value, value_optimizer=value_optimizer, state_preprocessor=statistics)
            return (learner, first_epoch), jnp.stack([loss, all_finite(value).astype(loss.dtype)])

        # the stored states: the value epochs preprocess them again (the batch's were preprocessed for the policy)
        mini_batches = contiguous_mini_batches(batch._replace(states=stored_states), cfg["mini_batches"])

        def epoch_step(learner: LearnerState, epoch: jax.Array) -> Tuple[LearnerState, jax.Array]:
            (learner, _), records = jax.lax.scan(mini_batch_step, (learner, epoch == 0), mini_batches)
            return self._scheduler_step(learner, timestep, None), records

        learner, records = jax.lax.scan(epoch_step, learner, jnp.arange(cfg["learning_epochs"]))
        value_losses = records[..., 0]
        report = TRPOReport(
            losses=Losses(policy_loss, value_losses.mean(), jnp.zeros(())),
            stddev=trial.stddev,
            learning_rate=learner.learning_rate,
            rollout_finite=rollout_finite,
            policy_finite=policy_finite,
            step_finite=jnp.stack([jnp.isfinite(value_losses), records[..., 1] > 0], -1),
        )
        return learner, report

    # -- the host side ------------------------------------------------------------------------------------------

    def tracked_values(self, report: TRPOReport, learning_rates: bool = False) -> Dict[str, Any]:
        tracked = {
            "Loss / Policy loss": report.losses.policy,
            "Loss / Value loss": report.losses.value,
            "Policy / Standard deviation": report.stddev,
        }
        if self._learning_rate_schedule is not None or learning_rates:
            tracked["Learning / Value learning rate"] = report.learning_rate
        return tracked

    def check_update(self, timestep: int, learner: LearnerState, report: TRPOReport) -> None:
        """One host transfer: raise naming the first non-finite quantity (rollout, policy step, value steps)."""
        rollout_finite, policy_finite, step_finite = jax.device_get(
            (report.rollout_finite, report.policy_finite, report.step_finite)
        )
        check_named_flags("TRPO", timestep, rollout_flag_names(), rollout_finite.tolist())
        if policy_finite.all() and step_finite.all():
            return
        note = non_finite_note(self._non_finite_parameters(learner))
        epochs, mini_batches = step_finite.shape[:2]
        steps = [(epoch, mini_batch) for epoch in range(epochs) for mini_batch in range(mini_batches)]
        names = [
            "the policy loss (surrogate) of the policy step",
            f"the policy parameters after the line search ({note})",
            *step_flag_names(steps, note, self._loss_terms),
        ]
        check_named_flags("TRPO", timestep, names, np.concatenate([policy_finite, step_finite.reshape(-1)]).tolist())
