"""Advantage Actor-Critic (A2C), JAX backend.

Mnih et al., "Asynchronous Methods for Deep Reinforcement Learning", 2016 (the synchronous variant). The same
algorithm as the torch backend (same config, same update rule) as one jitted pure function of explicit state: the
rollout with log pi_old(a|s), values, GAE returns and advantages (the on-policy half,
:class:`~skrl_like.jax.agents.on_policy.OnPolicyAgent`), then ONE pass over ``mini_batches`` contiguous
mini-batches: the policy-gradient loss ``-mean(A * log pi(a|s))`` plus the entropy bonus (skrl 1.4.3's JAX A2C
computes the entropy term but leaves it out of the gradient; here it is optimised, as in torch), the value MSE, an
Adam step of the policy then of the value model, and one learning-rate scheduler step per update.
"""

from typing import Any, NamedTuple, Tuple

import jax
import jax.numpy as jnp

from skrl_like.core.agents.a2c import A2C_DEFAULT_CONFIG  # JAX adds no keys
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

__all__ = ["A2C", "A2C_DEFAULT_CONFIG"]


class Trainable(NamedTuple):
    """The parameters the loss is differentiated with respect to."""

    policy: Any
    value: Any


class LossAux(NamedTuple):
    losses: Losses
    approx_kl: jax.Array
    stddev: jax.Array  # mean standard deviation of the policy's distribution on the mini-batch


class StepRecord(NamedTuple):
    """One per mini-batch (the scan stacks them to ``(mini_batches,)``)."""

    losses: Losses
    approx_kl: jax.Array
    parameters_finite: jax.Array  # after the step
    stddev: jax.Array


class A2C(OnPolicyAgent):
    """Advantage Actor-Critic.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``A2C_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    default_config = A2C_DEFAULT_CONFIG

    # -- learning -----------------------------------------------------------------------------------------------

    def _loss(self, trainable: Trainable, batch: RolloutBatch, key: Any = UNUSED_KEY) -> Tuple[jax.Array, LossAux]:
        """The A2C loss of one mini-batch (pure): ``(total, aux)``."""
        cfg = self.cfg
        inputs = self._update_inputs(batch, key)
        _, log_prob, outputs = self.policy.act(
            {**inputs, "taken_actions": batch.actions}, role="policy", params=trainable.policy
        )
        log_ratio = log_prob - batch.log_prob
        approx_kl = jax.lax.stop_gradient(((jnp.exp(log_ratio) - 1) - log_ratio).mean())

        # policy gradient with the normalised GAE advantages
        policy_loss = -(batch.advantages * log_prob).mean()

        # entropy bonus (optimised: skrl 1.4.3's JAX A2C only logs it)
        if cfg["entropy_loss_scale"]:
            entropy_loss = -cfg["entropy_loss_scale"] * self.policy.get_entropy(outputs, role="policy").mean()
        else:
            entropy_loss = jnp.zeros(())

        # value regression on the GAE returns (A2C has no value_loss_scale)
        predicted_values, _, _ = self.value.act(
            self._value_inputs(inputs, batch, key), role="value", params=trainable.value
        )
        value_loss = jnp.mean((batch.returns - predicted_values) ** 2)

        total = policy_loss + entropy_loss + value_loss
        return total, LossAux(Losses(policy_loss, value_loss, entropy_loss), approx_kl, outputs["stddev"].mean())

    def _learn(self, learner: LearnerState, rollout: Rollout, timestep: jax.Array) -> Tuple[LearnerState, UpdateReport]:
        """The whole update as one pure function: ``(new learner state, report)``."""
        learner, batch, rollout_finite = self._rollout_batch(learner, rollout)
        mini_batches = contiguous_mini_batches(batch, self.cfg["mini_batches"])

        def mini_batch_step(learner: LearnerState, batch: RolloutBatch) -> Tuple[LearnerState, StepRecord]:
            # the state statistics are updated on every mini-batch [compat]
            statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
            learner, batch = self._preprocess_privileged(learner._replace(state_preprocessor=statistics), batch, True)
            learner, key = self._draw_key(learner)
            (_, aux), grads = jax.value_and_grad(self._loss, has_aux=True)(
                Trainable(learner.policy, learner.value), batch._replace(states=states), key
            )
            # one Adam per model: the policy's step, then the value model's
            learner = self._optimizer_step(learner, grads)
            record = StepRecord(aux.losses, aux.approx_kl, all_finite((learner.policy, learner.value)), aux.stddev)
            return learner, record

        learner, records = jax.lax.scan(mini_batch_step, learner, mini_batches)
        # the scheduler steps once per update; KLAdaptiveLR sees the mean KL of the mini-batches
        learner = self._scheduler_step(learner, timestep, records.approx_kl.mean())

        step_finite = jnp.stack([*(jnp.isfinite(loss) for loss in records.losses), records.parameters_finite], -1)
        report = UpdateReport(
            losses=Losses(*(loss.mean() for loss in records.losses)),
            stddev=records.stddev[-1],  # of the last mini-batch
            learning_rate=learner.learning_rate,
            rollout_finite=rollout_finite,
            step_finite=step_finite[None],  # one pass: a single "epoch"
        )
        return learner, report
