"""The half of an on-policy agent that PPO, A2C, RPO and TRPO share (JAX), written once.

Collection (one jitted call per step, the rollout cadence), the rollout memory, the explicit learner state and its
gather/commit, and the start of every compiled update as a pure function: log pi_old(a|s) and V(s) of the whole
rollout with the parameters and statistics it was collected with, the time-limit bootstrap, GAE, the finite flags
and the value preprocessing. After the update, the host checks the flags (one transfer) before committing anything.
An algorithm subclasses :class:`OnPolicyAgent` and writes only its own loss and step in ``_learn``, returning an
:class:`UpdateReport`.
"""

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents.checks import (
    LOSS_TERMS,
    check_named_flags,
    check_rollout_memory,
    non_finite_note,
    rollout_flag_names,
    step_flag_names,
)
from skrl_like.core.agents.privileged import (
    NEXT_PRIVILEGED_STATES,
    PRIVILEGED_PREPROCESSOR,
    PRIVILEGED_STATES,
    build_privileged_preprocessor,
)
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    compute_gae,
    make_adam,
    make_scheduler,
)
from skrl_like.jax.utils.distributed import compile_update, mean_over_processes

# the log-probability of taken actions draws nothing, but the mixins want a key
UNUSED_KEY = np.array([0, 0], dtype=np.uint32)


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # the policy's parameters
    value: Any  # the value model's parameters
    policy_optimizer: Any  # ``None`` for an agent without one (TRPO)
    value_optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    value_preprocessor: Any
    learning_rate: jax.Array
    scheduler_steps: jax.Array  # the learning-rate scheduler's steps so far (what LinearLR's factor depends on)
    update_key: Any = None  # the update's random stream (RPO's perturbations); ``None``: the update draws nothing
    privileged_state_preprocessor: Any = ()  # the privileged states' running statistics (``()``: none)


Rollout = Transition  # the memory's tensors, ``(rollouts, num_envs, size)`` each


class RolloutBatch(NamedTuple):
    """The rollout as the losses read it, one row per sample (time-major: row ``t * num_envs + env``)."""

    states: jax.Array  # as stored (the losses preprocess them)
    actions: jax.Array
    log_prob: jax.Array  # log pi_old(a|s)
    values: jax.Array  # the rollout's values, preprocessed like the returns
    returns: jax.Array
    advantages: jax.Array
    privileged_states: Any = None  # the env's states an asymmetric value model reads (None: it reads the states)


class Losses(NamedTuple):
    policy: jax.Array
    value: jax.Array
    entropy: jax.Array


class UpdateReport(NamedTuple):
    """What an update tells the host: averaged losses and the finite flags to check before committing."""

    losses: Losses
    stddev: jax.Array  # the policy's mean standard deviation (tracked)
    learning_rate: jax.Array
    rollout_finite: jax.Array  # one per ``rollout_flag_names()``
    step_finite: jax.Array  # (epochs, mini_batches, len(loss terms) + 1): the losses, then the parameters after it


class OnPolicyAgent(Agent):
    """An agent with a ``"policy"`` and a ``"value"`` model that learns from one rollout of ``cfg["rollouts"]``
    steps at a time. Its :meth:`_setup` sets up both models and an optimizer for each (an algorithm that optimizes
    other models calls :meth:`_setup_on_policy` in its own); an algorithm's pure ``_learn(learner, rollout,
    timestep) -> (learner, UpdateReport)`` starts with :meth:`_rollout_batch`."""

    learner_type = LearnerState
    _loss_terms: Sequence[str] = LOSS_TERMS
    _update_key: Any = None  # a PRNG key when the update's model calls draw random numbers (RPO)
    _rollout_extras: Sequence[str] = ()  # memory tensors an update reads besides the transition (MAPPO's shared states)
    _privileged_state_roles = ("value",)  # an asymmetric actor-critic's value model may read the env's states

    def _setup(self) -> None:
        self._setup_on_policy()

    def _setup_on_policy(self, optimized: Sequence[str] = ("policy", "value")) -> None:
        """Check and register the two models; the rollout schedule, the preprocessors (and their functional forms),
        and one Adam per role of ``optimized``, each clipping its own gradients."""
        cfg = self.cfg
        algorithm = type(self).__name__
        self._require_models(("policy", "value"))
        for role in ("policy", "value"):
            if not hasattr(self.models[role], "state_dict"):
                raise ValueError(
                    f"{algorithm}: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self._check_model_outputs(value_roles=("value",), policy_roles=("policy",))
        self.policy = self.models["policy"]
        self.value = self.models["value"]
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        self.schedule = RolloutSchedule(cfg["rollouts"], cfg["learning_starts"], cfg["random_timesteps"])

        # the update passes the learner's rate to the optimizers (see make_adam)
        self._scheduler_class = cfg["learning_rate_scheduler"]
        self._learning_rate_schedule = make_scheduler(
            self._scheduler_class, cfg["learning_rate_scheduler_kwargs"], self.learner_type
        )
        self._learning_rate = cfg.get("learning_rate", cfg.get("value_learning_rate"))
        self._start_learning_rate_schedule(("learning_rate",))
        self.policy_optimizer = None
        for role in optimized:
            optimizer = make_adam(
                self.models[role], self._learning_rate, self._learning_rate_schedule, cfg["grad_norm_clip"]
            )
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._value_preprocessor = self._build_preprocessor("value_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))
        self._value_functional = FunctionalPreprocessor(self.checkpoint_modules.get("value_preprocessor"))
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)
        self._privileged_state_functional = FunctionalPreprocessor(self.checkpoint_modules.get(PRIVILEGED_PREPROCESSOR))

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """Create the memory tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        if self.memory is not None:
            check_rollout_memory(
                type(self).__name__, self.memory, self.cfg["rollouts"], self.cfg.get("mini_batches", 1)
            )
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=jnp.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=jnp.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="next_states", size=self.observation_space, dtype=jnp.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=jnp.int8)
            self.memory.create_tensor(name="truncated", size=1, dtype=jnp.int8)
            self._create_privileged_state_tensors(jnp.float32)
            if self.privileged_roles:  # read into the rollout's extras by _update
                self._rollout_extras = (*self._rollout_extras, PRIVILEGED_STATES, NEXT_PRIVILEGED_STATES)
        self._key = self._split_run_key()
        self._act_fn = jax.jit(self._sample_and_pack)
        self._update_fn = compile_update(self._learn)  # jax.jit, or one SPMD program over the processes

    # -- acting -------------------------------------------------------------------------------------------------

    def _model_inputs(self, states: jax.Array, key: Any = UNUSED_KEY) -> dict:
        """The inputs of every policy and value call for (preprocessed) ``states``: RPO adds its ``alpha``."""
        return {"states": states, "key": key}

    def _sample_and_pack(
        self, policy_params: Any, state_statistics: Any, states: jax.Array, key: jax.Array
    ) -> Tuple[Any, ...]:
        """One dispatch per step: ``(actions, log_prob, outputs, next key, packed)``, ``packed`` the actions and
        log-probabilities in one float32 array (one host transfer)."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        actions, log_prob, outputs = self.policy.act(
            self._model_inputs(processed, subkey), role="policy", params=policy_params
        )
        # one float32 array for what the host needs every step: a single transfer instead of two
        packed = jnp.concatenate([x.reshape(x.shape[0], -1).astype(jnp.float32) for x in (actions, log_prob)], axis=-1)
        return actions, log_prob, outputs, key, packed

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)`` (before ``random_timesteps``,
        uniform random actions with their log-probability under the policy, which the update recomputes)."""
        if self.schedule.acts_randomly(timestep):
            actions, _, outputs = self.policy.random_act({"states": states}, role="policy")
            processed = self._state_preprocessor(states)
            _, log_prob, _ = self.policy.act({**self._model_inputs(processed), "taken_actions": actions}, role="policy")
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

    # -- the start of every update (pure, inside the compiled update) -------------------------------------------

    @staticmethod
    def _draw_key(learner: LearnerState) -> Tuple[LearnerState, Any]:
        """``(learner, key)``: a fresh key split off ``learner.update_key`` for one batch of model calls, or the fixed
        unused key when the update draws nothing (``learner.update_key is None``, decided when tracing)."""
        if learner.update_key is None:
            return learner, UNUSED_KEY
        key, drawn = jax.random.split(learner.update_key)
        return learner._replace(update_key=key), drawn

    def _evaluate_rollout(
        self, learner: Any, rollout: Rollout, key: Any = UNUSED_KEY
    ) -> Tuple[jax.Array, jax.Array, jax.Array]:
        """``(log_prob, values, last_values)`` of the rollout with the parameters and statistics it was collected
        with: log pi_old(a|s) per sample, V(s) ``(rollouts, num_envs, 1)`` and V(next_states[-1]) ``(num_envs, 1)``,
        values in raw return units."""
        rollouts, num_envs = rollout.states.shape[:2]
        samples = rollouts * num_envs
        states = jnp.concatenate([rollout.states.reshape(samples, -1), rollout.next_states[-1]])
        _, processed = self._state_functional(learner.state_preprocessor, states)
        _, log_prob, _ = self.policy.act(
            {
                **self._rollout_policy_inputs(learner, rollout, processed[:samples], key),
                "taken_actions": rollout.actions.reshape(samples, -1),
            },
            role="policy",
            params=learner.policy,
        )
        all_values, _, _ = self.value.act(
            self._rollout_value_inputs(learner, rollout, processed, key), role="value", params=learner.value
        )
        _, all_values = self._value_functional(learner.value_preprocessor, all_values, inverse=True)
        return log_prob, all_values[:samples].reshape(rollouts, num_envs, 1), all_values[samples:]

    def _rollout_policy_inputs(self, learner: Any, rollout: Rollout, processed: jax.Array, key: Any) -> dict:
        """The policy's inputs for the rollout's (preprocessed) states, time-major rows: a recurrent agent adds each
        row's stored hidden states."""
        return self._model_inputs(processed, key)

    def _update_inputs(self, batch: Any, key: Any = UNUSED_KEY) -> dict:
        """The policy's inputs in the update for a mini-batch (its states preprocessed): a recurrent agent adds the
        rows' stored hidden states and episode ends."""
        return self._model_inputs(batch.states, key)

    def _rollout_value_inputs(self, learner: Any, rollout: Rollout, processed: jax.Array, key: Any) -> dict:
        """The value model's inputs for the rollout's states and the last next states (preprocessed, one batch):
        MAPPO's centralised critic reads the shared states instead, an asymmetric value model the privileged states
        stored beside the rollout."""
        if self.privileged_roles:
            stored = rollout.extras[PRIVILEGED_STATES]
            rows = jnp.concatenate([stored.reshape(-1, stored.shape[-1]), rollout.extras[NEXT_PRIVILEGED_STATES][-1]])
            _, rows = self._privileged_state_functional(learner.privileged_state_preprocessor, rows)
            return self._model_inputs(rows, key)
        return self._model_inputs(processed, key)

    def _preprocess_privileged(self, learner: Any, batch: RolloutBatch, train: Any) -> Tuple[Any, RolloutBatch]:
        """``(learner, batch)`` with the mini-batch's privileged states preprocessed where the value model reads them
        (statistics updated when ``train``: where the algorithm updates the states' with its states)."""
        if not self.privileged_roles:
            return learner, batch
        statistics, states = self._privileged_state_functional(
            learner.privileged_state_preprocessor, batch.privileged_states, train=train
        )
        return learner._replace(privileged_state_preprocessor=statistics), batch._replace(privileged_states=states)

    def _value_inputs(self, inputs: dict, batch: Any, key: Any) -> dict:
        """The value model's inputs in the loss (``inputs``: the policy's): the same by default; MAPPO's
        centralised critic reads the mini-batch's shared states, an asymmetric value model its privileged states, a
        recurrent value model its own hidden states."""
        if self.privileged_roles:
            return self._model_inputs(batch.privileged_states, key)
        return inputs

    def _rollout_batch(self, learner: Any, rollout: Rollout) -> Tuple[Any, RolloutBatch, jax.Array]:
        """``(learner, batch, rollout_finite)``: the rollout with log pi_old, values, GAE returns and advantages,
        preprocessed (the value statistics, updated with the values and then the returns, are in the returned
        learner), and one finite flag per ``rollout_flag_names()``."""
        cfg = self.cfg
        samples = rollout.states.shape[0] * rollout.states.shape[1]
        learner, key = self._draw_key(learner)
        log_prob, values, last_values = self._evaluate_rollout(learner, rollout, key)
        rewards = rollout.rewards
        if cfg["time_limit_bootstrap"]:
            rewards = rewards + cfg["discount_factor"] * values * rollout.truncated
        dones = jnp.logical_or(rollout.terminated, rollout.truncated)
        returns, advantages = compute_gae(rewards, dones, values, last_values, cfg["discount_factor"], cfg["lambda"])
        rollout_finite = jnp.stack([all_finite(x) for x in (rewards, log_prob, values, returns, advantages)])

        value_statistics, values = self._value_functional(learner.value_preprocessor, values, train=True)
        value_statistics, returns = self._value_functional(value_statistics, returns, train=True)
        batch = RolloutBatch(
            states=rollout.states.reshape(samples, -1),
            actions=rollout.actions.reshape(samples, -1),
            log_prob=log_prob,
            values=values.reshape(samples, 1),
            returns=returns.reshape(samples, 1),
            advantages=advantages.reshape(samples, 1),
        )
        if self.privileged_roles:
            stored = rollout.extras[PRIVILEGED_STATES]
            batch = batch._replace(privileged_states=stored.reshape(samples, stored.shape[-1]))
        return learner._replace(value_preprocessor=value_statistics), batch, rollout_finite

    def _scheduler_step(self, learner: LearnerState, timestep: Any, kl: Any) -> LearnerState:
        """``learner`` after one learning-rate scheduler step (pure; ``kl`` for ``KLAdaptiveLR``), counted."""
        return learner._replace(**self._scheduled_rates(learner, ("learning_rate",), timestep, kl))

    def _optimizer_step(self, learner: LearnerState, grads: Any, averaged: bool = False) -> LearnerState:
        """One Adam step per model (pure): the policy's, then the value model's (``grads.policy``, ``grads.value``),
        at the learner's learning rate. In a distributed run both models' gradients are averaged over the processes
        in one collective, unless ``averaged`` (the caller averaged them, with what else it averages)."""
        if not averaged:
            grads = mean_over_processes(grads)
        policy_optimizer, policy = learner.policy_optimizer.apply(grads.policy, learner.policy, learner.learning_rate)
        value_optimizer, value = learner.value_optimizer.apply(grads.value, learner.value, learner.learning_rate)
        return learner._replace(
            policy=policy, value=value, policy_optimizer=policy_optimizer, value_optimizer=value_optimizer
        )

    # -- the compiled form (the protocol of jax/agents/base.py): the same pure functions as the hooks above -------

    #: numbers read when the agent is built or that shape the compiled function: they cannot differ between runs
    compiled_fixed_keys = ("rollouts", "learning_epochs", "mini_batches", "grad_norm_clip", "random_timesteps")

    def compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        cfg = self.cfg
        obstacles = []
        if cfg.get("random_timesteps", 0) > 0:
            obstacles.append(
                f"cfg['random_timesteps'] = {cfg['random_timesteps']}: random actions are drawn by NumPy's global "
                "generator on the host; set it to 0"
            )
        if cfg.get("learning_starts", 0) > 0:
            obstacles.append(
                f"cfg['learning_starts'] = {cfg['learning_starts']}: every rollout of a compiled run ends in an "
                "update; set it to 0"
            )
        if self.secondary_memories:
            obstacles.append(
                f"{len(self.secondary_memories)} secondary memories: the rollout lives inside the compiled function "
                "and is written to no memory; pass only the rollout memory"
            )
        extras = tuple(name for name in self._rollout_extras if name not in self._compiled_extras())
        if extras:
            obstacles.append(f"the rollout of {type(self).__name__} also holds {extras}")
        return obstacles

    def _compiled_extras(self) -> Sequence[str]:
        """The rollout extras a compiled run stores itself (``compiled_end_step``): a recurrent agent's hidden
        states."""
        return ()

    def compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act``'s sample with the learner's parameters and statistics, from the acting stream ``key``."""
        actions, _, _, key, _ = self._sample_and_pack(learner.policy, learner.state_preprocessor, states, key)
        return learner, key, actions

    def compiled_learn(self, learner: LearnerState, rollout: Transition, timestep: jax.Array, key: jax.Array) -> tuple:
        """``_update``'s compiled call on the rollout (``key`` is not used: RPO draws from ``update_key``)."""
        return self._learn(learner, rollout, timestep)

    def _fresh_extras(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """A new update key when the update draws random numbers."""
        return learner._replace(update_key=None if learner.update_key is None else key)

    # -- the host side of an update -----------------------------------------------------------------------------

    def _update(self, timestep: int, timesteps: int) -> None:
        learner, report = self._update_fn(self.gather_learner(), self._gathered_rollout(), np.int32(timestep))
        self.check_update(timestep, learner, report)
        self.commit_learner(learner)
        self._track_update(report)

    def _gathered_rollout(self) -> Rollout:
        """The memory's rollout as the update reads it: the transition and the :attr:`_rollout_extras`."""
        tensors = {name: self.memory.get_tensor_by_name(name) for name in (*TRANSITION_NAMES, *self._rollout_extras)}
        return Transition(*(tensors.pop(name) for name in TRANSITION_NAMES), extras=tensors)

    def _track_update(self, report: UpdateReport) -> None:
        """Tracked as device scalars: converted only when written."""
        for tag, value in self.tracked_values(report).items():
            self.track_data(tag, value)

    def tracked_values(self, report: UpdateReport, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags (any leading axes): tracked by ``_update`` here, and
        written per update by ``CompiledTrainer``. The learning rate is tracked with a schedule, or with
        ``learning_rates`` (a compiled run that sweeps it: each run's own rate)."""
        tracked = {"Loss / Policy loss": report.losses.policy, "Loss / Value loss": report.losses.value}
        if self.cfg.get("entropy_loss_scale"):
            tracked["Loss / Entropy loss"] = report.losses.entropy
        if self._has_standard_deviation("policy"):  # a categorical policy has none
            tracked["Policy / Standard deviation"] = report.stddev
        if self._learning_rate_schedule is not None or learning_rates:
            tracked["Learning / Learning rate"] = report.learning_rate
        return tracked

    def check_update(self, timestep: int, learner: LearnerState, report: UpdateReport) -> None:
        """One host transfer: raise naming the first non-finite quantity (rollout, then each step in order)."""
        algorithm = type(self).__name__
        rollout_finite, step_finite = jax.device_get((report.rollout_finite, report.step_finite))
        check_named_flags(algorithm, timestep, rollout_flag_names(), rollout_finite.tolist())
        if step_finite.all():
            return
        epochs, mini_batches = step_finite.shape[:2]
        steps = [(epoch, mini_batch) for epoch in range(epochs) for mini_batch in range(mini_batches)]
        note = non_finite_note(self._non_finite_parameters(learner))
        names = step_flag_names(steps, note, self._loss_terms)
        check_named_flags(algorithm, timestep, names, step_finite.reshape(-1).tolist())

    def _non_finite_parameters(self, learner: LearnerState) -> list:
        return self._non_finite_parameter_names(learner, ("policy", "value"))
