"""Proximal Policy Optimization (PPO), JAX backend.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. The same algorithm as the torch backend (same
config, same update rule), written the PureJaxRL way: acting is one jitted call, and a whole update is one jitted
pure function of explicit state (a :class:`LearnerState`, see ``skrl_like.jax.agents.base``). It computes
log pi_old(a|s) and V(s) of the stored rollout (and V of the bootstrap state) with the parameters and statistics
the rollout was collected with, GAE, then ``learning_epochs`` passes over ``mini_batches`` contiguous mini-batches:
a clipped surrogate policy loss, an (optionally clipped) value loss and an optional entropy bonus, one Adam step
per model, KL early stopping and the learning-rate schedule. It returns the new state with finite flags that the
host checks before committing anything. Shapes are static, so nothing recompiles after the first update.
"""

from typing import Any, Mapping, NamedTuple, Optional, Tuple, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents.checks import (
    check_named_flags,
    check_rollout_memory,
    non_finite_note,
    rollout_flag_names,
    step_flag_names,
)
from skrl_like.core.agents.config import check_config
from skrl_like.core.agents.ppo import PPO_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.core.config import merge_config
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    compute_gae,
    contiguous_mini_batches,
    make_scheduler,
    step_scheduler,
)
from skrl_like.jax.resources.optimizers import Adam

__all__ = ["PPO", "PPO_DEFAULT_CONFIG"]

# the log-probability of taken actions draws nothing, but the mixins want a key
_UNUSED_KEY = np.array([0, 0], dtype=np.uint32)


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # the policy's parameters
    value: Any  # the value model's parameters
    policy_optimizer: Any
    value_optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    value_preprocessor: Any
    learning_rate: jax.Array


class Rollout(NamedTuple):
    """The memory's tensors, ``(rollouts, num_envs, size)`` each."""

    states: jax.Array
    actions: jax.Array
    rewards: jax.Array
    next_states: jax.Array
    terminated: jax.Array
    truncated: jax.Array


class MiniBatch(NamedTuple):
    """What the loss reads, one row per sample."""

    states: jax.Array
    actions: jax.Array
    log_prob: jax.Array  # log pi_old(a|s)
    values: jax.Array  # the rollout's values, preprocessed like the returns
    returns: jax.Array
    advantages: jax.Array


class Trainable(NamedTuple):
    """The parameters the loss is differentiated with respect to."""

    policy: Any
    value: Any


class Losses(NamedTuple):
    policy: jax.Array
    value: jax.Array
    entropy: jax.Array


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


class UpdateReport(NamedTuple):
    """What the update tells the host: averaged losses and the finite flags to check before committing."""

    losses: Losses  # summed over the steps taken / (learning_epochs * mini_batches)
    stddev: jax.Array
    learning_rate: jax.Array
    rollout_finite: jax.Array  # one per ``rollout_flag_names()``
    step_finite: jax.Array  # (learning_epochs, mini_batches, 4): the three losses and the parameters after the step


class PPO(Agent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: action space (or shape/size) of one environment.
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(PPO_DEFAULT_CONFIG, cfg, "PPO cfg")
        check_config(cfg, "PPO cfg")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "value"))
        for role in ("policy", "value"):
            if not hasattr(self.models[role], "state_dict"):
                raise ValueError(
                    f"PPO: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self._check_model_outputs(value_roles=("value",), policy_roles=("policy",))

        self.policy = self.models["policy"]
        self.value = self.models["value"]
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        if config.jax.is_distributed:
            self.policy.broadcast_parameters()
            self.value.broadcast_parameters()

        self.schedule = RolloutSchedule(cfg["rollouts"], cfg["learning_starts"])
        self._learning_rate = cfg["learning_rate"]

        # one Adam per model, each clipping its own gradients; with a schedule the update passes the rate
        self._scheduler = cfg["learning_rate_scheduler"]
        self._schedule = make_scheduler(self._scheduler, cfg["learning_rate_scheduler_kwargs"])
        for role, model in (("policy", self.policy), ("value", self.value)):
            optimizer = Adam(
                model=model, lr=cfg["learning_rate"], grad_norm_clip=cfg["grad_norm_clip"], scale=self._schedule is None
            )
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._value_preprocessor = self._build_preprocessor("value_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))
        self._value_functional = FunctionalPreprocessor(self.checkpoint_modules.get("value_preprocessor"))

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        if self.memory is not None:
            check_rollout_memory("PPO", self.memory, self.cfg["rollouts"], self.cfg["mini_batches"])
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=jnp.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=jnp.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="next_states", size=self.observation_space, dtype=jnp.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=jnp.int8)
            self.memory.create_tensor(name="truncated", size=1, dtype=jnp.int8)
        # this agent's own random stream, split off the run's key (set_seed makes it reproducible)
        config.jax.key, self._key = jax.random.split(config.jax.key)
        self._act_fn = jax.jit(self._sample)
        self._update_fn = jax.jit(self._learn)

    # -- acting -------------------------------------------------------------------------------------------------

    def _sample(self, policy_params: Any, state_statistics: Any, states: jax.Array, key: jax.Array) -> Tuple[Any, ...]:
        """One dispatch per step: sample actions and their log-probability."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        actions, log_prob, outputs = self.policy.act(
            {"states": processed, "key": subkey}, role="policy", params=policy_params
        )
        # one float32 array for what the host needs every step: a single transfer instead of two
        packed = jnp.concatenate([x.reshape(x.shape[0], -1).astype(jnp.float32) for x in (actions, log_prob)], axis=-1)
        return actions, log_prob, outputs, key, packed

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)``."""
        if timestep < self.cfg["random_timesteps"]:
            actions, _, outputs = self.policy.random_act({"states": states}, role="policy")
            # the log-probability of the random action under the policy (what the update recomputes)
            processed = self._state_preprocessor(states)
            _, log_prob, _ = self.policy.act({"states": processed, "taken_actions": actions}, role="policy")
            if not self._jax:
                actions, log_prob = jax.device_get((actions, log_prob))
            return actions, log_prob, outputs
        actions, log_prob, outputs, self._key, packed = self._act_fn(
            self.policy.state_dict.params, self._state_functional.state, states, self._key
        )
        if not self._jax:  # the NumPy backend: one transfer, then views (outputs stay lazy device arrays)
            packed = np.asarray(packed)
            action_end = actions.shape[-1]
            actions = packed[:, :action_end].astype(actions.dtype, copy=False)
            log_prob = packed[:, action_end:]
        return actions, log_prob, outputs

    def record_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: int,
        timesteps: int,
    ) -> None:
        """Track episode statistics and, while training, store the transition (what the update needs besides is
        computed there from the stored states, actions and next states)."""
        super().record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        self._store_training_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """While training, update every ``rollouts`` steps; then write checkpoints and TensorBoard data."""
        self._update_when_due(self.schedule, timestep, timesteps)
        super().post_interaction(timestep, timesteps)

    # -- learning -----------------------------------------------------------------------------------------------

    def _loss(self, trainable: Trainable, batch: MiniBatch) -> Tuple[jax.Array, LossAux]:
        """The PPO loss of one mini-batch (pure): ``(total, aux)``."""
        cfg = self.cfg
        _, log_prob, outputs = self.policy.act(
            {"states": batch.states, "taken_actions": batch.actions, "key": _UNUSED_KEY},
            role="policy",
            params=trainable.policy,
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
        predicted_values, _, _ = self.value.act({"states": batch.states}, role="value", params=trainable.value)
        if cfg["clip_predicted_values"]:
            predicted_values = batch.values + jnp.clip(
                predicted_values - batch.values, -cfg["value_clip"], cfg["value_clip"]
            )
        value_loss = cfg["value_loss_scale"] * jnp.mean((batch.returns - predicted_values) ** 2)

        total = policy_loss + entropy_loss + value_loss
        return total, LossAux(Losses(policy_loss, value_loss, entropy_loss), approx_kl, outputs["stddev"].mean())

    def _evaluate_rollout(self, learner: LearnerState, rollout: Rollout) -> Tuple[jax.Array, jax.Array, jax.Array]:
        """``(log_prob, values, last_values)`` of the rollout with the parameters and statistics it was collected
        with: log pi_old(a|s) per sample, V(s) ``(rollouts, num_envs, 1)`` and V(next_states[-1]) ``(num_envs, 1)``,
        values in raw return units."""
        rollouts, num_envs = rollout.states.shape[:2]
        samples = rollouts * num_envs
        states = jnp.concatenate([rollout.states.reshape(samples, -1), rollout.next_states[-1]])
        _, processed = self._state_functional(learner.state_preprocessor, states)
        _, log_prob, _ = self.policy.act(
            {"states": processed[:samples], "taken_actions": rollout.actions.reshape(samples, -1), "key": _UNUSED_KEY},
            role="policy",
            params=learner.policy,
        )
        all_values, _, _ = self.value.act({"states": processed}, role="value", params=learner.value)
        _, all_values = self._value_functional(learner.value_preprocessor, all_values, inverse=True)
        return log_prob, all_values[:samples].reshape(rollouts, num_envs, 1), all_values[samples:]

    def _learn(self, learner: LearnerState, rollout: Rollout, timestep: jax.Array) -> Tuple[LearnerState, UpdateReport]:
        """The whole update as one pure function: ``(new learner state, report)``."""
        cfg = self.cfg
        samples = rollout.states.shape[0] * rollout.states.shape[1]
        old_log_prob, values, last_values = self._evaluate_rollout(learner, rollout)
        rewards = rollout.rewards
        if cfg["time_limit_bootstrap"]:
            rewards = rewards + cfg["discount_factor"] * values * rollout.truncated
        dones = jnp.logical_or(rollout.terminated, rollout.truncated)
        returns, advantages = compute_gae(rewards, dones, values, last_values, cfg["discount_factor"], cfg["lambda"])
        rollout_finite = jnp.stack([all_finite(x) for x in (rewards, old_log_prob, values, returns, advantages)])

        value_statistics, old_values = self._value_functional(learner.value_preprocessor, values, train=True)
        value_statistics, returns = self._value_functional(value_statistics, returns, train=True)
        mini_batches = contiguous_mini_batches(
            MiniBatch(
                states=rollout.states.reshape(samples, -1),
                actions=rollout.actions.reshape(samples, -1),
                log_prob=old_log_prob,
                values=old_values.reshape(samples, 1),
                returns=returns.reshape(samples, 1),
                advantages=advantages.reshape(samples, 1),
            ),
            cfg["mini_batches"],
        )
        kl_threshold = cfg["kl_threshold"]

        def optimizer_step(learner: LearnerState, grads: Trainable) -> LearnerState:
            learning_rate = learner.learning_rate if self._schedule is not None else None
            policy_optimizer, policy = learner.policy_optimizer.update(grads.policy, learner.policy, learning_rate)
            value_optimizer, value = learner.value_optimizer.update(grads.value, learner.value, learning_rate)
            return learner._replace(
                policy=policy, value=value, policy_optimizer=policy_optimizer, value_optimizer=value_optimizer
            )

        def mini_batch_step(carry: EpochCarry, batch: MiniBatch) -> Tuple[EpochCarry, StepRecord]:
            reached = jnp.logical_not(carry.stopped)
            # the state statistics are updated in the first epoch only (by the mini-batches it evaluates)
            statistics, states = self._state_functional(
                carry.learner.state_preprocessor, batch.states, train=jnp.logical_and(carry.first_epoch, reached)
            )
            learner = carry.learner._replace(state_preprocessor=statistics)
            (_, aux), grads = jax.value_and_grad(self._loss, has_aux=True)(
                Trainable(learner.policy, learner.value), batch._replace(states=states)
            )
            if kl_threshold:
                # KL early stopping: no step for this mini-batch and none for the rest of the epoch
                stop = jnp.logical_or(carry.stopped, aux.approx_kl > kl_threshold)
                learner = jax.lax.cond(stop, lambda learner, grads: learner, optimizer_step, learner, grads)
            else:
                stop = carry.stopped
                learner = optimizer_step(learner, grads)
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
            learning_rate = step_scheduler(self._scheduler, self._schedule, carry.learner.learning_rate, timestep, kl)
            return carry.learner._replace(learning_rate=jnp.asarray(learning_rate, jnp.float32)), records

        learner = learner._replace(value_preprocessor=value_statistics)
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

    def _gather_learner_state(self) -> LearnerState:
        return LearnerState(
            policy=self.policy.state_dict.params,
            value=self.value.state_dict.params,
            policy_optimizer=self.policy_optimizer,
            value_optimizer=self.value_optimizer,
            state_preprocessor=self._state_functional.state,
            value_preprocessor=self._value_functional.state,
            learning_rate=jnp.asarray(self._learning_rate, jnp.float32),
        )

    def _commit_learner_state(self, learner: LearnerState) -> None:
        self.policy.state_dict = self.policy.state_dict.replace(params=learner.policy)
        self.value.state_dict = self.value.state_dict.replace(params=learner.value)
        self.policy_optimizer = learner.policy_optimizer
        self.value_optimizer = learner.value_optimizer
        self._state_functional.state = learner.state_preprocessor
        self._value_functional.state = learner.value_preprocessor
        self._learning_rate = learner.learning_rate

    def _update(self, timestep: int, timesteps: int) -> None:
        rollout = Rollout(*(self.memory.get_tensor_by_name(name) for name in Rollout._fields))
        learner, report = self._update_fn(self._gather_learner_state(), rollout, np.int32(timestep))
        self._check_update(timestep, learner, report)
        self._commit_learner_state(learner)

        # tracked as device scalars: converted only when written
        self.track_data("Loss / Policy loss", report.losses.policy)
        self.track_data("Loss / Value loss", report.losses.value)
        if self.cfg["entropy_loss_scale"]:
            self.track_data("Loss / Entropy loss", report.losses.entropy)
        self.track_data("Policy / Standard deviation", report.stddev)
        if self._schedule is not None:
            self.track_data("Learning / Learning rate", report.learning_rate)

    def _check_update(self, timestep: int, learner: LearnerState, report: UpdateReport) -> None:
        """One host transfer: raise naming the first non-finite quantity (rollout, then each step in order)."""
        rollout_finite, step_finite = jax.device_get((report.rollout_finite, report.step_finite))
        check_named_flags("PPO", timestep, rollout_flag_names(), rollout_finite.tolist())
        if step_finite.all():
            return
        epochs, mini_batches = step_finite.shape[:2]
        steps = [(epoch, mini_batch) for epoch in range(epochs) for mini_batch in range(mini_batches)]
        names = step_flag_names(steps, non_finite_note(self._non_finite_parameters(learner)))
        check_named_flags("PPO", timestep, names, step_finite.reshape(-1).tolist())

    @staticmethod
    def _non_finite_parameters(learner: LearnerState) -> list:
        return [
            f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the {role} model"
            for role, params in (("policy", learner.policy), ("value", learner.value))
            for path, leaf in jax.tree_util.tree_leaves_with_path(params)
            if not np.isfinite(np.asarray(leaf)).all()
        ]
