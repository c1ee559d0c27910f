"""Twin Delayed DDPG (TD3), JAX backend.

Fujimoto et al., "Addressing Function Approximation Error in Actor-Critic Methods", 2018. The same algorithm as the
torch backend (same config, same update rule), written the PureJaxRL way: one gradient step (both critics, the
delayed policy step as a ``lax.cond``, the polyak update of the three targets, the scheduler step) is one pure
function of explicit state (a :class:`LearnerState`), and an update runs its ``gradient_steps`` in one jitted
``lax.scan`` over batches drawn beforehand. The target-smoothing noise is drawn on the host beforehand from the
configured ``Noise`` (any noise works, and a run can match torch's draw for draw). The host checks the finite flags
before committing anything. Shapes are static and the delay is traced, so nothing recompiles after the first update.

Under :class:`~skrl_like.jax.trainers.CompiledTrainer` the same update runs inside the compiled run, with the
exploration and smoothing noise drawn from the run's keys (``GaussianNoise`` only) instead of the host's ``Noise``.

Each critic steps with its own gradient (skrl 1.4.3's JAX TD3 stepped both with critic 2's).
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import logger
from skrl_like.core.agents import td3 as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import TORCH_ONLY_KEYS, check_config
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, noise_decay_timesteps
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.td3 import TD3_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.config import merge_config
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    fresh_optimizer,
    make_adam,
    make_scheduler,
    polyak_update,
    step_scheduler,
    td_targets,
)
from skrl_like.jax.agents.off_policy import (
    PackedReport,
    compiled_acts_randomly,
    compiled_exploration,
    compiled_noise_obstacles,
    compiled_replay_obstacles,
    create_replay_tensors,
    device_scalar,
    exploration_act,
    gaussian_noise,
    init_target,
    sample_batches,
    smoothed_target_actions,
    stack_samples,
    warn_if_identical,
)
from skrl_like.jax.utils.distributed import compile_update, mean_over_processes

__all__ = ["TD3", "TD3_DEFAULT_CONFIG"]

ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


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


class Transitions(NamedTuple):
    """The replay's fields, in the order of ``neutral.TENSOR_NAMES`` (what a compiled run keeps as arrays)."""

    states: jax.Array
    actions: jax.Array
    rewards: jax.Array
    next_states: jax.Array
    terminated: jax.Array
    truncated: jax.Array


class Batch(NamedTuple):
    """One gradient step's sampled transitions (``(batch_size, size)`` each, the fields of :class:`Transitions`) and
    its smoothing noise."""

    states: jax.Array
    actions: jax.Array
    rewards: jax.Array
    next_states: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    smoothing_noise: Optional[jax.Array]  # ``(batch_size, action_size)``, unclipped; ``None``: no smoothing


class Critics(NamedTuple):
    """The parameters the critic loss is differentiated with respect to."""

    critic_1: Any
    critic_2: Any


class StepRecord(NamedTuple):
    """One per gradient step (the scan stacks them to ``(gradient_steps, ...)``)."""

    critic_loss: jax.Array
    policy_loss: jax.Array  # 0 on the steps without a policy step
    delayed: jax.Array  # the policy and the targets stepped
    critic_1_values: jax.Array  # (max, min, mean)
    critic_2_values: jax.Array
    target_values: jax.Array
    policy_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    finite: jax.Array  # one per neutral.STEP_QUANTITIES, then the parameters after the step


def _statistics(values: jax.Array) -> jax.Array:
    return jnp.stack([jnp.max(values), jnp.min(values), jnp.mean(values)])


class TD3(Agent):
    """Twin Delayed DDPG.

    :param models: ``{"policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``,
        each with parameters (``model.init_state_dict(role)``): deterministic policies with one output per action
        dimension, critics taking ``states`` and ``taken_actions`` with one output; each target of the same
        architecture as its online model.
    :param memory: a replay memory (e.g. ``RandomMemory``) of at least ``cfg["batch_size"]`` rows, or a list of
        memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space of one environment (its bounds clip the actions).
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``TD3_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _learning_rates = {"actor_learning_rate": "policy_learning_rate", "critic_learning_rate": "critic_learning_rate"}

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(TD3_DEFAULT_CONFIG, cfg, "TD3 cfg", ignored=TORCH_ONLY_KEYS)
        check_config(cfg, "TD3 cfg")
        check_action_space("TD3", action_space, "Box")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(ROLES)
        for role in ROLES:
            if not hasattr(self.models[role], "state_dict"):
                raise ValueError(
                    f"TD3: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self._check_model_outputs(policy_roles=("policy", "target_policy"), critic_roles=ROLES[2:])
        check_batch_size("TD3", cfg["batch_size"], self.memory)

        self.policy = self.models["policy"]
        self.target_policy = self.models["target_policy"]
        self.critic_1 = self.models["critic_1"]
        self.critic_2 = self.models["critic_2"]
        self.target_critic_1 = self.models["target_critic_1"]
        self.target_critic_2 = self.models["target_critic_2"]
        for role in ROLES:
            self.checkpoint_modules[role] = self.models[role]

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._critic_update_counter = 0
        self._policy_learning_rate = cfg["actor_learning_rate"]
        self._critic_learning_rate = cfg["critic_learning_rate"]

        # one Adam per model, each clipping its own gradients; with a schedule the update passes the rate
        self._scheduler = cfg["learning_rate_scheduler"]
        self._schedule = make_scheduler(self._scheduler, cfg["learning_rate_scheduler_kwargs"])
        for role, learning_rate in (
            ("policy", cfg["actor_learning_rate"]),
            ("critic_1", cfg["critic_learning_rate"]),
            ("critic_2", cfg["critic_learning_rate"]),
        ):
            optimizer = make_adam(self.models[role], learning_rate, self._schedule, cfg["grad_norm_clip"])
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")
        for source in ("policy", "critic_1", "critic_2"):
            init_target("TD3", self.models, f"target_{source}", source)

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))
        if cfg["smooth_regularization_noise"] is None:
            logger.warning(neutral.SMOOTHING_WARNING)
        warn_if_identical("TD3", self.models, "critic_1", "critic_2")

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the action bounds, the writer and the jitted functions (called once)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        # the decay length is fixed now; resuming restores it (run state) instead of taking the new total
        self._noise_decay_timesteps = noise_decay_timesteps(self.cfg["exploration"], trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.float32)
        self.clip_actions_min = jnp.asarray(self.action_space.low, dtype=jnp.float32).reshape(-1)
        self.clip_actions_max = jnp.asarray(self.action_space.high, dtype=jnp.float32).reshape(-1)
        self._act_fn = jax.jit(self._policy_actions)
        self._key = None  # act draws from the Noise objects; a CompiledTrainer gives its run an acting stream here
        # the report (finite flags, tracked numbers) comes back packed: one host transfer per update
        self._packed_learn = PackedReport(self._learn)
        self._update_fn = compile_update(self._packed_learn)  # jax.jit, or one SPMD program over the processes

    # -- acting -------------------------------------------------------------------------------------------------

    def _policy_actions(self, policy_params: Any, state_statistics: Any, states: jax.Array) -> Tuple[jax.Array, dict]:
        _, processed = self._state_functional(state_statistics, states)
        actions, _, outputs = self.policy.act({"states": processed}, role="policy", params=policy_params)
        return actions, outputs

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """The policy's actions plus the decaying exploration noise (random actions during ``random_timesteps`` while
        training);
        returns ``(actions, None, outputs)``, ``outputs["mean_actions"]`` the actions without noise."""
        # warm-up while training only: an evaluation (whose timesteps restart at 0) plays the policy
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": self._state_preprocessor(states)}, role="policy")
        actions, outputs = self._act_fn(self.policy.state_dict.params, self._state_functional.state, states)
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

    # -- learning -----------------------------------------------------------------------------------------------

    def _critic_loss(
        self, critics: Critics, states: jax.Array, actions: jax.Array, target_values: jax.Array
    ) -> Tuple[jax.Array, Tuple[jax.Array, jax.Array]]:
        """The SUM of both critics' mean squared errors [compat] (pure): ``(loss, (Q1, Q2))``. Each critic's
        gradient is that of its own error."""
        inputs = {"states": states, "taken_actions": actions}
        critic_1_values, _, _ = self.critic_1.act(inputs, role="critic_1", params=critics.critic_1)
        critic_2_values, _, _ = self.critic_2.act(inputs, role="critic_2", params=critics.critic_2)
        critic_1_loss = jnp.mean((critic_1_values - target_values) ** 2)
        critic_2_loss = jnp.mean((critic_2_values - target_values) ** 2)
        return critic_1_loss + critic_2_loss, (critic_1_values, critic_2_values)

    def _policy_loss(self, policy_params: Any, critic_1_params: Any, states: jax.Array) -> jax.Array:
        """``-mean Q1(s, pi(s))`` (pure)."""
        actions, _, _ = self.policy.act({"states": states}, role="policy", params=policy_params)
        values, _, _ = self.critic_1.act(
            {"states": states, "taken_actions": actions}, role="critic_1", params=critic_1_params
        )
        return -jnp.mean(values)

    def _gradient_step(
        self, learner: LearnerState, batch: Batch, timestep: jax.Array
    ) -> Tuple[LearnerState, StepRecord]:
        """One gradient step (pure): both critics, then, every ``policy_delay``-th critic step, the policy and the
        polyak update of the three targets; the schedulers step every time."""
        cfg = self.cfg
        policy_learning_rate, critic_learning_rate = learner.policy_learning_rate, learner.critic_learning_rate
        # the state statistics are updated twice, with the states and the next states [compat]
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)

        # TD targets: the smaller target critic, at the smoothed target policy's action
        next_actions, _, _ = self.target_policy.act(
            {"states": next_states}, role="target_policy", params=learner.target_policy
        )
        next_actions = smoothed_target_actions(
            next_actions,
            batch.smoothing_noise,
            cfg["smooth_regularization_clip"],
            self.clip_actions_min,
            self.clip_actions_max,
        )
        next_inputs = {"states": next_states, "taken_actions": next_actions}
        target_q1_values, _, _ = self.target_critic_1.act(
            next_inputs, role="target_critic_1", params=learner.target_critic_1
        )
        target_q2_values, _, _ = self.target_critic_2.act(
            next_inputs, role="target_critic_2", params=learner.target_critic_2
        )
        target_values = td_targets(
            batch.rewards, batch.terminated, jnp.minimum(target_q1_values, target_q2_values), cfg["discount_factor"]
        )

        # critic step: each critic with its own gradient (averaged over the processes together: one collective)
        (critic_loss, (critic_1_values, critic_2_values)), grads = jax.value_and_grad(self._critic_loss, has_aux=True)(
            Critics(learner.critic_1, learner.critic_2), states, batch.actions, target_values
        )
        grads = mean_over_processes(grads)
        critic_1_optimizer, critic_1 = learner.critic_1_optimizer.apply(
            grads.critic_1, learner.critic_1, critic_learning_rate
        )
        critic_2_optimizer, critic_2 = learner.critic_2_optimizer.apply(
            grads.critic_2, learner.critic_2, critic_learning_rate
        )
        critic_updates = learner.critic_updates + 1
        learner = learner._replace(
            critic_1=critic_1,
            critic_2=critic_2,
            critic_1_optimizer=critic_1_optimizer,
            critic_2_optimizer=critic_2_optimizer,
            state_preprocessor=statistics,
            critic_updates=critic_updates,
        )

        # delayed policy step and polyak update of the three targets
        def policy_step(learner: LearnerState) -> Tuple[LearnerState, jax.Array]:
            policy_loss, grad = jax.value_and_grad(self._policy_loss)(learner.policy, learner.critic_1, states)
            policy_optimizer, policy = learner.policy_optimizer.update(grad, learner.policy, policy_learning_rate)
            polyak = cfg["polyak"]
            learner = learner._replace(
                policy=policy,
                policy_optimizer=policy_optimizer,
                target_policy=polyak_update(learner.target_policy, policy, polyak),
                target_critic_1=polyak_update(learner.target_critic_1, learner.critic_1, polyak),
                target_critic_2=polyak_update(learner.target_critic_2, learner.critic_2, polyak),
            )
            return learner, policy_loss

        def no_policy_step(learner: LearnerState) -> Tuple[LearnerState, jax.Array]:
            return learner, jnp.zeros((), jnp.float32)

        delayed = critic_updates % cfg["policy_delay"] == 0
        learner, policy_loss = jax.lax.cond(delayed, policy_step, no_policy_step, learner)

        # the schedulers step at every gradient step
        learner = learner._replace(
            policy_learning_rate=jnp.asarray(
                step_scheduler(self._scheduler, self._schedule, learner.policy_learning_rate, timestep, None),
                jnp.float32,
            ),
            critic_learning_rate=jnp.asarray(
                step_scheduler(self._scheduler, self._schedule, learner.critic_learning_rate, timestep, None),
                jnp.float32,
            ),
        )

        quantities = (batch.states, batch.actions, batch.rewards, batch.next_states, target_values)
        finite = jnp.stack(
            [
                *(all_finite(x) for x in quantities),
                jnp.isfinite(critic_loss),
                jnp.isfinite(policy_loss),
                all_finite((learner.policy, learner.critic_1, learner.critic_2)),
            ]
        )
        record = StepRecord(
            critic_loss=critic_loss,
            policy_loss=policy_loss,
            delayed=delayed,
            critic_1_values=_statistics(critic_1_values),
            critic_2_values=_statistics(critic_2_values),
            target_values=_statistics(target_values),
            policy_learning_rate=learner.policy_learning_rate,
            critic_learning_rate=learner.critic_learning_rate,
            finite=finite,
        )
        return learner, record

    def _learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array) -> Tuple[LearnerState, StepRecord]:
        """The whole update as one pure function: ``gradient_steps`` gradient steps in a ``lax.scan`` over the
        pre-drawn batches (leaves ``(gradient_steps, batch_size, size)``)."""
        return jax.lax.scan(lambda learner, batch: self._gradient_step(learner, batch, timestep), learner, batches)

    def _draw_batches(self) -> Batch:
        """``gradient_steps`` fresh batches and their smoothing noise, drawn on the host: one ``(batch_size,
        action_size)`` sample of the noise per gradient step, as torch draws it."""
        cfg = self.cfg
        sampled = sample_batches(self.memory, neutral.TENSOR_NAMES, cfg["batch_size"], cfg["gradient_steps"])
        noise = cfg["smooth_regularization_noise"]
        smoothing_noise = None
        if noise is not None:
            shape = (cfg["batch_size"], sampled[1].shape[-1])
            smoothing_noise = stack_samples([noise.sample(shape) for _ in range(cfg["gradient_steps"])])
        return Batch(*sampled, smoothing_noise=smoothing_noise)

    def _gather_learner_state(self) -> LearnerState:
        return LearnerState(
            policy=self.policy.state_dict.params,
            target_policy=self.target_policy.state_dict.params,
            critic_1=self.critic_1.state_dict.params,
            critic_2=self.critic_2.state_dict.params,
            target_critic_1=self.target_critic_1.state_dict.params,
            target_critic_2=self.target_critic_2.state_dict.params,
            policy_optimizer=self.policy_optimizer,
            critic_1_optimizer=self.critic_1_optimizer,
            critic_2_optimizer=self.critic_2_optimizer,
            state_preprocessor=self._state_functional.state,
            policy_learning_rate=device_scalar(self._policy_learning_rate, jnp.float32),
            critic_learning_rate=device_scalar(self._critic_learning_rate, jnp.float32),
            critic_updates=device_scalar(self._critic_update_counter, jnp.int32),
        )

    def _commit_learner_state(self, learner: LearnerState) -> None:
        for role in ROLES:
            model = self.models[role]
            model.state_dict = model.state_dict.replace(params=getattr(learner, role))
        self.policy_optimizer = learner.policy_optimizer
        self.critic_1_optimizer = learner.critic_1_optimizer
        self.critic_2_optimizer = learner.critic_2_optimizer
        self._state_functional.state = learner.state_preprocessor
        self._policy_learning_rate = learner.policy_learning_rate
        self._critic_learning_rate = learner.critic_learning_rate
        self._critic_update_counter = learner.critic_updates  # the policy delay's count (kept on the device)

    def _update(self, timestep: int, timesteps: int) -> None:
        learner, packed = self._update_fn(self._gather_learner_state(), self._draw_batches(), np.int32(timestep))
        records = self._packed_learn.unpack(packed)  # one transfer: the flags to check and what is tracked
        self._check_update(timestep, learner, records)
        self._commit_learner_state(learner)

        for tag, values in self._tracked(records).items():
            for step in range(len(records.delayed)):
                if tag != "Loss / Policy loss" or records.delayed[step]:  # no policy loss without a policy step
                    self.track_data(tag, values[step])

    def _tracked(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags, one value per gradient step (the last axis): tracked by
        ``_update`` here, and written per step by ``CompiledTrainer`` (the policy loss NaN on the steps without a
        policy step, so that its reduction leaves them out). The learning rates are tracked with a schedule, or with
        ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {
            "Loss / Policy loss": np.where(records.delayed, records.policy_loss, np.nan),
            "Loss / Critic loss": records.critic_loss,
        }
        for tag, values in (
            ("Q-network / Q1", records.critic_1_values),
            ("Q-network / Q2", records.critic_2_values),
            ("Target / Target", records.target_values),
        ):
            for index, reduction in enumerate(("max", "min", "mean")):
                tracked[f"{tag} ({reduction})"] = values[..., index]
        if self._schedule is not None or learning_rates:
            tracked["Learning / Policy learning rate"] = records.policy_learning_rate
            tracked["Learning / Critic learning rate"] = records.critic_learning_rate
        return tracked

    # -- the compiled form: CompiledTrainer composes the same pure functions as the hooks above ------------------
    # (``_compiled_act`` is ``act``'s ``_policy_actions`` plus the exploration noise, ``transition_to_store`` what
    # ``record_transition`` stores, and ``_learn`` the update, on batches drawn from the replay kept as arrays in the
    # run's state; the noises are drawn from the run's keys instead of the host ``Noise`` objects)

    _batch_type = Transitions  # the replay's fields, in the order of sample_batches
    # numbers read when the agent is built or that shape the compiled function: not sweepable in a compiled run
    _compiled_fixed_keys = (  # besides off_policy.REPLAY_FIXED_KEYS
        "grad_norm_clip",
        "policy_delay",
    )
    # equal in every run of a vmapped compiled run (each starts from the agent's count, or 0 when seeded, and makes
    # the same steps): passed once, so the policy delay's lax.cond stays a branch instead of a select
    _compiled_shared_fields = ("critic_updates",)

    def _compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        return compiled_replay_obstacles(self) + compiled_noise_obstacles(
            self.cfg, ("exploration", "smooth_regularization_noise")
        )

    def _compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act`` inside a compiled run: :meth:`_policy_actions` with the learner's parameters and statistics, plus
        the decaying exploration noise drawn from ``key`` (the run's acting stream)."""
        key, noise_key = jax.random.split(key)
        actions, _ = self._policy_actions(learner.policy, learner.state_preprocessor, states)
        actions = compiled_exploration(
            noise_key,
            actions,
            self.cfg["exploration"],
            timestep,
            self._noise_decay_timesteps or timesteps,
            self.clip_actions_min,
            self.clip_actions_max,
        )
        return learner, key, actions

    _compiled_acts_randomly = compiled_acts_randomly

    def _compiled_learn(
        self, learner: LearnerState, transitions: Transitions, timestep: jax.Array, key: jax.Array
    ) -> tuple:
        """``_update``'s compiled call: the batches of :meth:`_draw_batches`, the smoothing noise drawn from ``key``
        (one ``(batch_size, action_size)`` sample per gradient step)."""
        noise = self.cfg["smooth_regularization_noise"]
        smoothing_noise = None if noise is None else gaussian_noise(key, transitions.actions.shape, noise)
        return self._learn(learner, Batch(*transitions, smoothing_noise=smoothing_noise), timestep)

    def _fresh_learner(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """``learner`` with new parameters for the policy and both critics drawn from ``key`` (the models'
        initialisers; the targets start as copies), fresh optimizer states and no critic step yet (pure: one per seed
        in a vmapped run). The preprocessor's statistics and the learning rates are kept."""
        policy_key, critic_1_key, critic_2_key = jax.random.split(key, 3)
        policy = self.policy.initial_params("policy", policy_key)
        critic_1 = self.critic_1.initial_params("critic_1", critic_1_key)
        critic_2 = self.critic_2.initial_params("critic_2", critic_2_key)
        return learner._replace(
            policy=policy,
            target_policy=policy,
            critic_1=critic_1,
            critic_2=critic_2,
            target_critic_1=critic_1,
            target_critic_2=critic_2,
            policy_optimizer=fresh_optimizer(learner.policy_optimizer, policy),
            critic_1_optimizer=fresh_optimizer(learner.critic_1_optimizer, critic_1),
            critic_2_optimizer=fresh_optimizer(learner.critic_2_optimizer, critic_2),
            critic_updates=jnp.zeros_like(learner.critic_updates),
        )

    def _check_update(self, timestep: int, learner: LearnerState, records: StepRecord) -> None:
        """Raise naming the first non-finite quantity (step by step) before anything is committed."""
        if records.finite.all():
            return
        note = non_finite_note(
            [
                f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the {role} model"
                for role in ("policy", "critic_1", "critic_2")
                for path, leaf in jax.tree_util.tree_leaves_with_path(getattr(learner, role))
                if not np.isfinite(np.asarray(leaf)).all()
            ]
        )
        names = neutral.step_flag_names(len(records.finite), note)
        check_named_flags("TD3", timestep, names, records.finite.reshape(-1).tolist())
