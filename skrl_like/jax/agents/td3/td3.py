"""Twin Delayed DDPG (TD3), JAX backend, and DDPG as its configuration.

Fujimoto et al., "Addressing Function Approximation Error in Actor-Critic Methods", 2018. The same algorithm as the
torch backend (same config, same update rule), written the PureJaxRL way: one gradient step is three small pure
updates of explicit state (a :class:`LearnerState`), ``update_critic`` (both critics on the TD target of the smoothed
target policy), then, every ``policy_delay``-th critic step (a ``lax.cond``), ``update_actor`` and ``update_targets``
(polyak), and an update runs its ``gradient_steps`` in one jitted ``lax.scan`` over batches drawn beforehand. The
target-smoothing noise is drawn on the host beforehand from the configured ``Noise`` (any noise works, and a run can
match torch's draw for draw). The host checks the finite flags before committing anything. Shapes are static and the
delay is traced, so nothing recompiles after the first update.

DDPG (:mod:`skrl_like.jax.agents.ddpg`) is this class with one critic, a policy step at every critic step and no
target smoothing, as SB3 writes ``DDPG(TD3)``.

Under :class:`~skrl_like.jax.trainers.CompiledTrainer` the same update runs inside the compiled run, with the
exploration and smoothing noise drawn from the run's keys (``GaussianNoise`` only) instead of the host's ``Noise``.

Each critic steps with its own gradient (skrl 1.4.3's JAX TD3 stepped both with critic 2's).
"""

import functools
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import logger
from skrl_like.core.agents import td3 as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.off_policy import (
    check_action_space,
    check_batch_size,
    gradient_step_flag_names,
    noise_decay_timesteps,
)
from skrl_like.core.agents.privileged import PRIVILEGED_PREPROCESSOR, build_privileged_preprocessor, critic_states
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.td3 import TD3_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.agents.transition import Transition
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    make_scheduler,
    td_targets,
)
from skrl_like.jax.agents.off_policy import (
    REPLAY_FIXED_KEYS,
    compile_packed_update,
    compiled_exploration,
    compiled_noise_obstacles,
    compiled_replay_obstacles,
    create_replay_tensors,
    exploration_act,
    gaussian_noise,
    init_target,
    learn_deferred,
    max_min_mean,
    max_min_mean_tags,
    polyak_targets,
    preprocess_privileged,
    q_values,
    smoothed_target_actions,
    stack_samples,
    track_gradient_steps,
    update_critics,
    warn_if_identical,
)

__all__ = ["TD3", "TD3_DEFAULT_CONFIG"]


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # parameters
    target_policy: Any
    critic_1: Any
    critic_2: Any
    target_critic_1: Any
    target_critic_2: Any
    policy_optimizer: Any
    critic_1_optimizer: Any
    critic_2_optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    policy_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    critic_updates: jax.Array  # critic steps so far: the policy steps after every policy_delay-th
    scheduler_steps: jax.Array  # the learning-rate schedulers' steps so far (what LinearLR's factor depends on)
    privileged_state_preprocessor: Any = ()  # the privileged states' running statistics (``()``: none)


class StepRecord(NamedTuple):
    """One per gradient step (the scan stacks them to ``(gradient_steps, ...)``)."""

    critic_loss: jax.Array
    policy_loss: jax.Array  # 0 on the steps without a policy step
    delayed: jax.Array  # the policy and the targets stepped
    critic_values: jax.Array  # (critics, 3): (max, min, mean) of each critic on the sampled actions
    policy_values: jax.Array  # (max, min, mean) of the first critic on the policy's actions (0 without a policy step)
    target_values: jax.Array
    policy_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    finite: jax.Array  # one per neutral.STEP_QUANTITIES, then the parameters after the step


class TD3(Agent):
    """Twin Delayed DDPG.

    :param models: ``{"policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``,
        each with parameters (``model.init_state_dict(role)``): deterministic policies with one output per action
        dimension, critics taking ``states`` and ``taken_actions`` with one output; each target of the same
        architecture as its online model.
    :param memory: a replay memory (e.g. ``RandomMemory``) of at least ``cfg["batch_size"]`` rows, or a list of
        memories (the first one is used for learning).
    :param action_space: the ``Box`` action space of one environment (its bounds clip the actions).
    :param cfg: keys of ``TD3_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    learner_type = LearnerState
    learning_rate_fields = {
        "actor_learning_rate": "policy_learning_rate",
        "critic_learning_rate": "critic_learning_rate",
    }
    # what makes TD3 TD3 (DDPG sets one critic, no delay and no smoothing)
    default_config: Mapping[str, Any] = TD3_DEFAULT_CONFIG
    critic_roles: Tuple[str, ...] = ("critic_1", "critic_2")
    #: the roles that may read the env's privileged states (asymmetric critics): the critics and their targets
    _privileged_state_roles: Tuple[str, ...] = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
    delayed_policy = True  # the policy step is a lax.cond on the critic-step count (DDPG: at every step)

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        name = type(self).__name__
        check_action_space(name, action_space, "Box")

    def _setup(self) -> None:
        cfg = self.cfg
        name = type(self).__name__
        self.target_critic_roles = tuple(f"target_{role}" for role in self.critic_roles)
        self._adopt_models(("policy", "target_policy", *self.critic_roles, *self.target_critic_roles))
        self._check_model_outputs(
            policy_roles=("policy", "target_policy"), critic_roles=(*self.critic_roles, *self.target_critic_roles)
        )
        check_batch_size(name, cfg["batch_size"], self.memory)

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._critic_updates = 0
        self._policy_learning_rate = cfg["actor_learning_rate"]
        self._critic_learning_rate = cfg["critic_learning_rate"]

        # one Adam per model, each clipping its own gradients; with a schedule the update passes the rate
        self._scheduler_class = cfg["learning_rate_scheduler"]
        self._learning_rate_schedule = make_scheduler(
            self._scheduler_class, cfg["learning_rate_scheduler_kwargs"], self.learner_type
        )
        self._start_learning_rate_schedule(("policy_learning_rate", "critic_learning_rate"))
        critic_rates = dict.fromkeys(self.critic_roles, cfg["critic_learning_rate"])
        self._make_optimizers({"policy": cfg["actor_learning_rate"], **critic_rates})
        for source in ("policy", *self.critic_roles):
            init_target(name, self.models, f"target_{source}", source)

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)
        self._privileged_state_functional = FunctionalPreprocessor(self.checkpoint_modules.get(PRIVILEGED_PREPROCESSOR))
        if len(self.critic_roles) > 1:
            if cfg["smooth_regularization_noise"] is None:
                logger.warning(neutral.SMOOTHING_WARNING)
            warn_if_identical(name, self.models, *self.critic_roles)

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the action bounds, the writer and the jitted functions (called once)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        # the decay length is fixed now; resuming restores it (run state) instead of taking the new total
        self._noise_decay_timesteps = noise_decay_timesteps(self.cfg["exploration"], trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.float32)
        self._create_privileged_state_tensors(jnp.float32)
        with jax.default_device(self.device):
            self.clip_actions_min = jnp.asarray(self.action_space.low, dtype=jnp.float32).reshape(-1)
            self.clip_actions_max = jnp.asarray(self.action_space.high, dtype=jnp.float32).reshape(-1)
        self._act_fn = jax.jit(self._policy_actions)
        self._key = None  # act draws from the Noise objects; compiled_start gives a compiled run an acting stream
        compile_packed_update(self)  # the report (finite flags, tracked numbers): one host transfer per update

    # -- acting -------------------------------------------------------------------------------------------------

    def _policy_actions(
        self, policy_params: Any, state_statistics: Any, states: jax.Array, acting: Any = None
    ) -> Tuple[jax.Array, dict]:
        _, processed = self._state_functional(state_statistics, states)
        inputs = {"states": processed, **(acting or {})}  # acting: the policy's further inputs (_acting_inputs)
        actions, _, outputs = self.policy.act(inputs, role="policy", params=policy_params)
        return actions, outputs

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """The policy's actions plus the decaying exploration noise (random actions during ``random_timesteps`` while
        training);
        returns ``(actions, None, outputs)``, ``outputs["mean_actions"]`` the actions without noise."""
        # warm-up while training only: an evaluation (whose timesteps restart at 0) plays the policy
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": self._state_preprocessor(states)}, role="policy")
        actions, outputs = self._act_fn(
            self.policy.state_dict.params, self._state_functional.state, states, self._acting_inputs()
        )
        # the noiseless actions, which a trainer's deterministic evaluation plays (exploration off)
        outputs = {**outputs, "mean_actions": actions}
        exploration = self.cfg["exploration"]
        actions = exploration_act(
            actions,
            exploration["noise"],
            exploration,
            timestep,
            self._noise_decay_timesteps or timesteps,
            self.clip_actions_min,
            self.clip_actions_max,
            self.track_data,
            host=not self._jax,
        )
        if not self._jax:
            actions = np.asarray(actions)
        return actions, None, outputs

    # -- learning: small pure updates, composed by _gradient_step ------------------------------------------------

    def _target_values(
        self,
        learner: LearnerState,
        batch: Transition,
        next_states: jax.Array,
        next_states_for_critics: jax.Array,
        sequence: dict,
    ) -> jax.Array:
        """TD targets: the smallest target critic (on ``next_states_for_critics``) at the (smoothed) target policy's
        action (on ``next_states``)."""
        next_actions, _, _ = self.target_policy.act(
            {"states": next_states, **sequence}, role="target_policy", params=learner.target_policy
        )
        next_actions = smoothed_target_actions(
            next_actions,
            batch.extras.get("smoothing_noise"),
            self.cfg.get("smooth_regularization_clip", 0.0),
            self.clip_actions_min,
            self.clip_actions_max,
        )
        targets = [getattr(learner, role) for role in self.target_critic_roles]
        next_values = functools.reduce(
            jnp.minimum,
            q_values(self.models, self.target_critic_roles, targets, next_states_for_critics, next_actions, sequence),
        )
        return td_targets(batch.rewards, batch.terminated, next_values, self.cfg["discount_factor"])

    def update_critic(
        self, learner: LearnerState, states: jax.Array, actions: jax.Array, target_values: jax.Array, sequence: dict
    ):
        """The critics' step on the SUM of their errors [compat] (each its own gradient): ``(learner, loss, values)``."""
        learner, loss, values = update_critics(
            self.models, learner, self.critic_roles, states, actions, target_values, sequence
        )
        return learner._replace(critic_updates=learner.critic_updates + 1), loss, values

    def _policy_loss(
        self, policy_params: Any, critic_params: Any, states: jax.Array, states_for_critics: jax.Array, sequence: dict
    ) -> tuple:
        """``-mean Q1(s, pi(s))`` (pure): ``(loss, Q1)``; the critic reads ``states_for_critics`` (the privileged
        states of an asymmetric critic, else ``states``)."""
        actions, _, _ = self.policy.act({"states": states, **sequence}, role="policy", params=policy_params)
        critics = (critic_params,)
        (values,) = q_values(self.models, self.critic_roles[:1], critics, states_for_critics, actions, sequence)
        return -jnp.mean(values), values

    def update_actor(
        self, learner: LearnerState, states: jax.Array, states_for_critics: jax.Array, sequence: dict = {}
    ) -> tuple:
        """One Adam step of the policy on the first critic's value of its actions: ``(learner, loss, values)``."""
        critic = getattr(learner, self.critic_roles[0])
        (loss, values), grad = jax.value_and_grad(self._policy_loss, has_aux=True)(
            learner.policy, critic, states, states_for_critics, sequence
        )
        optimizer, policy = learner.policy_optimizer.update(grad, learner.policy, learner.policy_learning_rate)
        return learner._replace(policy=policy, policy_optimizer=optimizer), loss, values

    def update_targets(self, learner: LearnerState) -> LearnerState:
        """Polyak update of the target policy and the target critics."""
        return polyak_targets(learner, ("policy", *self.critic_roles), self.cfg["polyak"])

    def _gradient_step(self, learner: LearnerState, batch: Transition, timestep: jax.Array) -> tuple:
        """One gradient step (pure): the critics, then, every ``policy_delay``-th critic step, the policy and the
        targets; the schedulers step every time."""
        learner, batch = preprocess_privileged(self, learner, batch)  # where the critics read them
        # the state statistics are updated twice, with the states and the next states [compat]
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)
        # the critics read the env's privileged states where they ask for them (asymmetric actor-critic)
        states_for_critics, next_states_for_critics = critic_states(batch.extras, states, next_states)
        sequence = self._sequence_inputs(batch)  # what every model reads beside its states (hidden states)
        target_values = self._target_values(learner, batch, next_states, next_states_for_critics, sequence)
        learner, critic_loss, critic_values = self.update_critic(
            learner, states_for_critics, batch.actions, target_values, sequence
        )
        learner = learner._replace(state_preprocessor=statistics)

        def actor_and_targets(learner: LearnerState) -> tuple:
            learner, policy_loss, policy_values = self.update_actor(learner, states, states_for_critics, sequence)
            return self.update_targets(learner), policy_loss, max_min_mean(policy_values)

        def skipped(learner: LearnerState) -> tuple:
            return learner, jnp.zeros((), jnp.float32), jnp.zeros(3, jnp.float32)

        if self.delayed_policy:
            delayed = learner.critic_updates % self.cfg["policy_delay"] == 0
            learner, policy_loss, policy_values = jax.lax.cond(delayed, actor_and_targets, skipped, learner)
        else:
            delayed = jnp.ones((), bool)
            learner, policy_loss, policy_values = actor_and_targets(learner)
        learner = learner._replace(
            **self._scheduled_rates(learner, ("policy_learning_rate", "critic_learning_rate"), timestep)
        )

        quantities = (batch.states, batch.actions, batch.rewards, batch.next_states, target_values)
        critics = tuple(getattr(learner, role) for role in self.critic_roles)
        finite = jnp.stack(
            [
                *(all_finite(x) for x in quantities),
                jnp.isfinite(critic_loss),
                jnp.isfinite(policy_loss),
                all_finite((learner.policy, *critics)),
            ]
        )
        record = StepRecord(
            critic_loss=critic_loss,
            policy_loss=policy_loss,
            delayed=delayed,
            critic_values=jnp.stack([max_min_mean(values) for values in critic_values]),
            policy_values=policy_values,
            target_values=max_min_mean(target_values),
            policy_learning_rate=learner.policy_learning_rate,
            critic_learning_rate=learner.critic_learning_rate,
            finite=finite,
        )
        return learner, record

    def _learn(self, learner: LearnerState, batches: Transition, timestep: jax.Array) -> Tuple[LearnerState, Any]:
        """The whole update as one pure function: ``gradient_steps`` gradient steps in a ``lax.scan`` over the
        pre-drawn batches (leaves ``(gradient_steps, batch_size, size)``; TD3's smoothing noise in ``extras``)."""
        return jax.lax.scan(lambda learner, batch: self._gradient_step(learner, batch, timestep), learner, batches)

    def _draw_batches(self) -> Transition:
        """``gradient_steps`` fresh batches and their smoothing noise, drawn on the host: one ``(batch_size,
        action_size)`` sample of the noise per gradient step, as torch draws it."""
        cfg = self.cfg
        batches = self._replay_batches()  # the privileged states where the critics read them
        noise = cfg.get("smooth_regularization_noise")
        if noise is None:
            return batches
        shape = batches.actions.shape[1:]  # (rows, action_size): an _RNN agent's batch_size * sequence_length rows
        return batches.with_extras(
            smoothing_noise=stack_samples([noise.sample(shape) for _ in range(cfg["gradient_steps"])])
        )

    def _update(self, timestep: int, timesteps: int) -> None:
        learn_deferred(self, timestep, self._draw_batches())

    def _handle_report(self, timestep: int, packed: np.ndarray) -> None:
        track_gradient_steps(self, timestep, packed)  # the policy loss only of the steps with a policy step

    def tracked_values(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags, one value per gradient step (the last axis): tracked by
        ``_update`` here, and written per step by ``CompiledTrainer`` (the policy loss NaN on the steps without a
        policy step, so that its reduction leaves them out). The learning rates are tracked with a schedule, or with
        ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {
            "Loss / Policy loss": np.where(records.delayed, records.policy_loss, np.nan),
            "Loss / Critic loss": records.critic_loss,
        }
        for index in range(2):
            tracked.update(max_min_mean_tags(f"Q-network / Q{index + 1}", records.critic_values[..., index, :]))
        tracked.update(max_min_mean_tags("Target / Target", records.target_values))
        if self._learning_rate_schedule is not None or learning_rates:
            tracked["Learning / Policy learning rate"] = records.policy_learning_rate
            tracked["Learning / Critic learning rate"] = records.critic_learning_rate
        return tracked

    # -- the compiled form (the protocol of jax/agents/base.py): ``act``'s ``_policy_actions`` plus the exploration
    # noise, and the update, on batches drawn from the replay kept as arrays in the run's state; the noises are drawn
    # from the run's keys instead of the host ``Noise`` objects

    compiled_fixed_keys = REPLAY_FIXED_KEYS + ("grad_norm_clip", "policy_delay")
    # equal in every run of a vmapped compiled run (each starts from the agent's count, or 0 when seeded, and makes
    # the same steps): passed once, so the policy delay's lax.cond stays a branch instead of a select
    compiled_shared_fields = ("critic_updates",)

    def compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        noises = (
            ("exploration", "smooth_regularization_noise")
            if "smooth_regularization_noise" in self.cfg
            else ("exploration",)
        )
        return compiled_replay_obstacles(self) + compiled_noise_obstacles(self.cfg, noises)

    def compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act`` inside a compiled run: :meth:`_policy_actions` with the learner's parameters and statistics, plus
        the decaying exploration noise drawn from ``key`` (the run's acting stream)."""
        key, noise_key = jax.random.split(key)
        actions, _ = self._policy_actions(learner.policy, learner.state_preprocessor, states)
        bounds = (self.clip_actions_min, self.clip_actions_max)
        actions = compiled_exploration(
            noise_key, actions, self.cfg["exploration"], timestep, self._noise_decay_timesteps or timesteps, *bounds
        )
        return learner, key, actions

    def compiled_learn(self, learner: LearnerState, batches: Transition, timestep: jax.Array, key: jax.Array) -> tuple:
        """``_update``'s compiled call: the batches of :meth:`_draw_batches`, the smoothing noise drawn from ``key``
        (one ``(batch_size, action_size)`` sample per gradient step)."""
        noise = self.cfg.get("smooth_regularization_noise")
        if noise is not None:
            batches = batches.with_extras(smoothing_noise=gaussian_noise(key, batches.actions.shape, noise))
        return self._learn(learner, batches, timestep)

    def _fresh_extras(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """No critic step yet: the policy delay counts from the run's start."""
        return learner._replace(critic_updates=jnp.zeros_like(learner.critic_updates))

    def check_update(self, timestep: int, learner: LearnerState, records: StepRecord) -> None:
        """Raise naming the first non-finite quantity (step by step) before anything is committed."""
        if records.finite.all():
            return
        note = non_finite_note(self._non_finite_parameter_names(learner, self._checked_roles))
        names = gradient_step_flag_names(len(records.finite), neutral.STEP_QUANTITIES, note)
        check_named_flags(type(self).__name__, timestep, names, records.finite.reshape(-1).tolist())

    _checked_roles = ("policy", "critic_1", "critic_2")  # the order their non-finite parameters are named in
