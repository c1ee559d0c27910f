"""Proximal Policy Optimization (PPO), JAX backend.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. The same algorithm as the torch backend (same
config, same update rule), written the PureJaxRL way: acting is one jitted call, and a whole update is one jitted
pure function of explicit state (the on-policy half, :class:`~skrl_like.jax.agents.on_policy.OnPolicyAgent`). It
takes the rollout with log pi_old(a|s), values, GAE returns and advantages from there, then makes
``learning_epochs`` passes over ``mini_batches`` contiguous mini-batches: a clipped surrogate policy loss, an
(optionally clipped) value loss and an optional entropy bonus, one Adam step per model, KL early stopping and the
learning-rate schedule. It returns the new state with finite flags that the host checks before committing anything.
Shapes are static, so nothing recompiles after the first update.
"""

from functools import partial
from typing import Any, NamedTuple, Tuple

import jax
import jax.numpy as jnp

from skrl_like.core.agents.ppo import PPO_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.jax.agents.mechanics import all_finite, contiguous_mini_batches
from skrl_like.jax.agents.on_policy import (
    UNUSED_KEY,
    LearnerState,
    Losses,
    OnPolicyAgent,
    Rollout,
    RolloutBatch,
    UpdateReport,
)
from skrl_like.jax.utils.distributed import mean_over_processes

__all__ = ["PPO", "PPO_DEFAULT_CONFIG"]


class Trainable(NamedTuple):
    """The parameters the loss is differentiated with respect to."""

    policy: Any
    value: Any


class LossAux(NamedTuple):
    losses: Losses
    approx_kl: jax.Array
    stddev: jax.Array  # mean standard deviation of the policy's distribution on the mini-batch


class EpochCarry(NamedTuple):
    """Carried from one mini-batch to the next within an epoch."""

    learner: LearnerState
    first_epoch: jax.Array
    stopped: jax.Array  # KL early stopping: no further step in this epoch


class StepRecord(NamedTuple):
    """One per mini-batch (the scans stack them to ``(learning_epochs, mini_batches)``)."""

    losses: Losses
    approx_kl: jax.Array
    reached: jax.Array  # the mini-batch was evaluated (not after an early stop in its epoch)
    stepped: jax.Array  # the optimizers stepped on it
    parameters_finite: jax.Array  # after the step
    stddev: jax.Array


class PPO(OnPolicyAgent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    default_config = PPO_DEFAULT_CONFIG

    # -- learning -----------------------------------------------------------------------------------------------

    def _preprocess_mini_batch(self, learner: LearnerState, batch: RolloutBatch, train: Any) -> Tuple[Any, Any]:
        """``(learner, batch)`` with the mini-batch's states (and privileged states) preprocessed (statistics updated
        when ``train``)."""
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=train)
        return self._preprocess_privileged(
            learner._replace(state_preprocessor=statistics), batch._replace(states=states), train
        )

    def _loss(self, trainable: Trainable, batch: RolloutBatch, key: Any = UNUSED_KEY) -> Tuple[jax.Array, LossAux]:
        """The PPO loss of one mini-batch (pure): ``(total, aux)``; ``key`` for models that draw (RPO)."""
        cfg = self.cfg
        inputs = self._update_inputs(batch, key)
        _, log_prob, outputs = self.policy.act(
            {**inputs, "taken_actions": batch.actions}, role="policy", params=trainable.policy
        )
        log_ratio = log_prob - batch.log_prob
        approx_kl = jax.lax.stop_gradient(((jnp.exp(log_ratio) - 1) - log_ratio).mean())

        # clipped surrogate objective
        ratio = jnp.exp(log_ratio)
        surrogate = batch.advantages * ratio
        clipped_surrogate = batch.advantages * jnp.clip(ratio, 1.0 - cfg["ratio_clip"], 1.0 + cfg["ratio_clip"])
        policy_loss = -jnp.minimum(surrogate, clipped_surrogate).mean()

        # entropy bonus
        if cfg["entropy_loss_scale"]:
            entropy_loss = -cfg["entropy_loss_scale"] * self.policy.get_entropy(outputs, role="policy").mean()
        else:
            entropy_loss = jnp.zeros(())

        # value loss, predictions optionally clipped around the rollout's values
        predicted_values, _, _ = self.value.act(
            self._value_inputs(inputs, batch, key), role="value", params=trainable.value
        )
        if cfg["clip_predicted_values"]:
            predicted_values = batch.values + jnp.clip(
                predicted_values - batch.values, -cfg["value_clip"], cfg["value_clip"]
            )
        value_loss = cfg["value_loss_scale"] * jnp.mean((batch.returns - predicted_values) ** 2)

        total = policy_loss + entropy_loss + value_loss
        return total, LossAux(Losses(policy_loss, value_loss, entropy_loss), approx_kl, outputs["stddev"].mean())

    def _learn(self, learner: LearnerState, rollout: Rollout, timestep: jax.Array) -> Tuple[LearnerState, UpdateReport]:
        """The whole update as one pure function: ``(new learner state, report)``."""
        cfg = self.cfg
        learner, batch, rollout_finite = self._rollout_batch(learner, rollout)
        mini_batches = contiguous_mini_batches(batch, cfg["mini_batches"])
        kl_threshold = cfg["kl_threshold"]

        def mini_batch_step(carry: EpochCarry, batch: RolloutBatch) -> Tuple[EpochCarry, StepRecord]:
            reached = jnp.logical_not(carry.stopped)
            # the state statistics are updated in the first epoch only (by the mini-batches it evaluates)
            learner, batch = self._preprocess_mini_batch(
                carry.learner, batch, train=jnp.logical_and(carry.first_epoch, reached)
            )
            learner, key = self._draw_key(learner)
            (_, aux), grads = jax.value_and_grad(self._loss, has_aux=True)(
                Trainable(learner.policy, learner.value), batch, key
            )
            if kl_threshold:
                # KL early stopping: no step for this mini-batch and none for the rest of the epoch; every process
                # stops at the same mini-batch: the KL of them all decides (averaged with the gradients: one
                # collective)
                grads, approx_kl = mean_over_processes((grads, aux.approx_kl))
                aux = aux._replace(approx_kl=approx_kl)
                stop = jnp.logical_or(carry.stopped, aux.approx_kl > kl_threshold)
                learner = jax.lax.cond(
                    stop, lambda learner, grads: learner, partial(self._optimizer_step, averaged=True), learner, grads
                )
            else:
                stop = carry.stopped
                learner = self._optimizer_step(learner, grads)
            record = StepRecord(
                losses=aux.losses,
                approx_kl=aux.approx_kl,
                reached=reached,
                stepped=jnp.logical_not(stop),
                parameters_finite=all_finite((learner.policy, learner.value)),
                stddev=aux.stddev,
            )
            return carry._replace(learner=learner, stopped=stop), record

        def epoch_step(learner: LearnerState, epoch: jax.Array) -> Tuple[LearnerState, StepRecord]:
            carry = EpochCarry(learner, first_epoch=epoch == 0, stopped=jnp.zeros((), bool))
            carry, records = jax.lax.scan(mini_batch_step, carry, mini_batches)
            # the scheduler sees the mean KL of the mini-batches evaluated in this epoch
            kl = jnp.sum(jnp.where(records.reached, records.approx_kl, 0)) / jnp.maximum(jnp.sum(records.reached), 1)
            return self._scheduler_step(carry.learner, timestep, kl), records

        learner, records = jax.lax.scan(epoch_step, learner, jnp.arange(cfg["learning_epochs"]))

        stepped = records.stepped
        # losses are averaged over every planned mini-batch, also when KL early stopping skipped some [compat]
        planned = cfg["learning_epochs"] * cfg["mini_batches"]
        losses = Losses(*(jnp.sum(jnp.where(stepped, loss, 0)) / planned for loss in records.losses))
        # the standard deviation of the last mini-batch evaluated
        reached = records.reached.reshape(-1)
        last = jnp.max(jnp.where(reached, jnp.arange(reached.size), 0))
        step_finite = jnp.stack([*(jnp.isfinite(loss) for loss in records.losses), records.parameters_finite], -1)
        report = UpdateReport(
            losses=losses,
            stddev=records.stddev.reshape(-1)[last],
            learning_rate=learner.learning_rate,
            rollout_finite=rollout_finite,
            step_finite=jnp.logical_or(step_finite, jnp.logical_not(stepped)[..., None]),
        )
        return learner, report
