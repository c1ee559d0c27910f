"""Deep Deterministic Policy Gradient (DDPG), JAX backend.

Lillicrap et al., "Continuous control with deep reinforcement learning", 2015. The same algorithm as the torch
backend (same config, same update rule), written the PureJaxRL way: one gradient step (the TD target from the target
actor and target critic, a critic step on the mean squared TD error, an actor step on ``-Q(s, mu(s))`` with the
just-updated critic, the polyak updates of both targets, the learning-rate schedule) is one pure function of explicit
state (a :class:`LearnerState`), and an update runs ``gradient_steps`` of them in one ``lax.scan`` over batches drawn
beforehand, as one compiled call. It returns the new state with finite flags that the host checks before committing
anything. Shapes are static, so nothing recompiles after the first update.

Under :class:`~skrl_like.jax.trainers.CompiledTrainer` the same update runs inside the compiled run, with the
exploration noise drawn from the run's acting key (``GaussianNoise`` only) instead of the host's ``Noise``.
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core.agents import ddpg as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import TORCH_ONLY_KEYS, check_config
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, noise_decay_timesteps
from skrl_like.core.agents.schedule import OffPolicySchedule
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
    init_target,
    sample_batches,
)
from skrl_like.jax.utils.distributed import compile_update

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG"]

DDPG_DEFAULT_CONFIG = neutral.DDPG_DEFAULT_CONFIG  # JAX adds no keys


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # the parameters of each model
    target_policy: Any
    critic: Any
    target_critic: Any
    policy_optimizer: Any
    critic_optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    policy_learning_rate: jax.Array
    critic_learning_rate: jax.Array


class Batch(NamedTuple):
    """Replay transitions, ``(batch_size, size)`` each (``(gradient_steps, batch_size, size)`` for a whole update)."""

    states: jax.Array
    actions: jax.Array
    rewards: jax.Array
    next_states: jax.Array
    terminated: jax.Array
    truncated: jax.Array


class StepRecord(NamedTuple):
    """What one gradient step reports (the scan stacks them to ``(gradient_steps, ...)``)."""

    policy_loss: jax.Array
    critic_loss: jax.Array
    q_values: jax.Array  # max, min, mean of Q(s, mu(s)) in the actor step
    targets: jax.Array  # max, min, mean of the TD targets
    learning_rates: jax.Array  # policy's, critic's after the scheduler step
    finite: jax.Array  # one per name of ``core.agents.ddpg.step_flag_names``


def _statistics(values: jax.Array) -> jax.Array:
    return jnp.stack([values.max(), values.min(), values.mean()])


class DDPG(Agent):
    """Deep Deterministic Policy Gradient.

    :param models: ``{"policy", "target_policy", "critic", "target_critic"}``, each with parameters
        (``model.init_state_dict(role)``): deterministic actors that output one number per action dimension, and
        Q-functions of ``{"states", "taken_actions"}`` that output one value; each target has the parameter tree of
        its online model (it starts as a copy of it).
    :param memory: a replay memory of at least ``cfg["batch_size"]`` rows, or a list of memories (the first one
        is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space of one environment (its bounds clip the exploration noise).
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``DDPG_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
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
        cfg = merge_config(DDPG_DEFAULT_CONFIG, cfg, "DDPG cfg", ignored=TORCH_ONLY_KEYS)
        check_config(cfg, "DDPG cfg")
        check_action_space("DDPG", action_space, "Box")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "target_policy", "critic", "target_critic"))
        for role in ("policy", "target_policy", "critic", "target_critic"):
            if not hasattr(self.models[role], "state_dict"):
                raise ValueError(
                    f"DDPG: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self._check_model_outputs(policy_roles=("policy", "target_policy"), critic_roles=("critic", "target_critic"))
        check_batch_size("DDPG", cfg["batch_size"], self.memory)

        self.policy = self.models["policy"]
        self.target_policy = self.models["target_policy"]
        self.critic = self.models["critic"]
        self.target_critic = self.models["target_critic"]
        for role in ("policy", "target_policy", "critic", "target_critic"):
            self.checkpoint_modules[role] = self.models[role]

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._policy_learning_rate = cfg["actor_learning_rate"]
        self._critic_learning_rate = cfg["critic_learning_rate"]

        # one Adam per model, each clipping its own gradients; with a schedule the update passes the rate
        self._scheduler = cfg["learning_rate_scheduler"]
        self._schedule = make_scheduler(self._scheduler, cfg["learning_rate_scheduler_kwargs"])
        for role, learning_rate in (("policy", cfg["actor_learning_rate"]), ("critic", cfg["critic_learning_rate"])):
            optimizer = make_adam(self.models[role], learning_rate, self._schedule, cfg["grad_norm_clip"])
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")
        init_target("DDPG", self.models, "target_policy", "policy")
        init_target("DDPG", self.models, "target_critic", "critic")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the replay tensors, the action bounds, the writer and the jitted functions (called once, by the
        trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        # the decay length is fixed now; resuming restores it (run state) instead of taking the new total
        self._noise_decay_timesteps = noise_decay_timesteps(self.cfg["exploration"], trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.float32)
        with jax.default_device(self.device):
            self.clip_actions_min = jnp.asarray(self.action_space.low, dtype=jnp.float32).reshape(-1)
            self.clip_actions_max = jnp.asarray(self.action_space.high, dtype=jnp.float32).reshape(-1)
        self._act_fn = jax.jit(self._deterministic_actions)
        self._key = None  # act draws from the Noise objects; a CompiledTrainer gives its run an acting stream here
        # the report (finite flags, tracked numbers) comes back packed: one host transfer per update
        self._packed_learn = PackedReport(self._learn)
        self._update_fn = compile_update(self._packed_learn)  # jax.jit, or one SPMD program over the processes

    # -- acting -------------------------------------------------------------------------------------------------

    def _deterministic_actions(self, policy_params: Any, state_statistics: Any, states: jax.Array) -> jax.Array:
        _, processed = self._state_functional(state_statistics, states)
        actions, _, _ = self.policy.act({"states": processed}, role="policy", params=policy_params)
        return actions

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """The actor's actions plus the decaying exploration noise, clipped to the action bounds; returns
        ``(actions, None, outputs)`` with the noiseless actions as ``outputs["mean_actions"]`` (what a deterministic
        evaluation plays). While training and ``timestep < random_timesteps``: random actions."""
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": self._state_preprocessor(states)}, role="policy")
        mean_actions = self._act_fn(self.policy.state_dict.params, self._state_functional.state, states)
        exploration = self.cfg["exploration"]
        actions = exploration_act(
            mean_actions,
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
            actions, mean_actions = np.asarray(actions), np.asarray(mean_actions)
        return actions, None, {"mean_actions": mean_actions}

    # -- learning -----------------------------------------------------------------------------------------------

    def _critic_loss(self, critic_params: Any, states: jax.Array, actions: jax.Array, targets: jax.Array) -> jax.Array:
        """Mean squared TD error of the critic."""
        critic_values, _, _ = self.critic.act(
            {"states": states, "taken_actions": actions}, role="critic", params=critic_params
        )
        return jnp.mean((critic_values - targets) ** 2)

    def _policy_loss(self, policy_params: Any, critic_params: Any, states: jax.Array) -> Tuple[jax.Array, jax.Array]:
        """``-mean Q(s, mu(s))``: the critic's value of the actor's actions, maximised; aux: those values."""
        actions, _, _ = self.policy.act({"states": states}, role="policy", params=policy_params)
        q_values, _, _ = self.critic.act(
            {"states": states, "taken_actions": actions}, role="critic", params=critic_params
        )
        return -q_values.mean(), q_values

    def _gradient_step(
        self, learner: LearnerState, batch: Batch, timestep: jax.Array
    ) -> Tuple[LearnerState, StepRecord]:
        """One DDPG gradient step on one batch (pure)."""
        cfg = self.cfg
        # the statistics are updated with the states, then with the next states [compat]
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)

        # TD target from the target actor and target critic
        next_actions, _, _ = self.target_policy.act(
            {"states": next_states}, role="target_policy", params=learner.target_policy
        )
        target_q_values, _, _ = self.target_critic.act(
            {"states": next_states, "taken_actions": next_actions}, role="target_critic", params=learner.target_critic
        )
        targets = td_targets(batch.rewards, batch.terminated, target_q_values, cfg["discount_factor"])

        # critic step
        critic_loss, critic_grad = jax.value_and_grad(self._critic_loss)(learner.critic, states, batch.actions, targets)
        critic_optimizer, critic = learner.critic_optimizer.update(
            critic_grad, learner.critic, learner.critic_learning_rate
        )

        # actor step, with the updated critic
        (policy_loss, q_values), policy_grad = jax.value_and_grad(self._policy_loss, has_aux=True)(
            learner.policy, critic, states
        )
        policy_optimizer, policy = learner.policy_optimizer.update(
            policy_grad, learner.policy, learner.policy_learning_rate
        )

        # soft updates of the targets, then the learning-rate schedule
        target_policy = polyak_update(learner.target_policy, policy, cfg["polyak"])
        target_critic = polyak_update(learner.target_critic, critic, cfg["polyak"])
        policy_learning_rate, critic_learning_rate = (
            jnp.asarray(step_scheduler(self._scheduler, self._schedule, rate, timestep, None), jnp.float32)
            for rate in (learner.policy_learning_rate, learner.critic_learning_rate)
        )

        finite = jnp.stack(
            [
                *(all_finite(x) for x in (batch.states, batch.actions, batch.rewards, batch.next_states, targets)),
                jnp.isfinite(critic_loss),
                jnp.isfinite(policy_loss),
                all_finite((critic, policy)),
            ]
        )
        learner = LearnerState(
            policy=policy,
            target_policy=target_policy,
            critic=critic,
            target_critic=target_critic,
            policy_optimizer=policy_optimizer,
            critic_optimizer=critic_optimizer,
            state_preprocessor=statistics,
            policy_learning_rate=policy_learning_rate,
            critic_learning_rate=critic_learning_rate,
        )
        record = StepRecord(
            policy_loss=policy_loss,
            critic_loss=critic_loss,
            q_values=_statistics(q_values),
            targets=_statistics(targets),
            learning_rates=jnp.stack([policy_learning_rate, critic_learning_rate]),
            finite=finite,
        )
        return learner, record

    def _learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array) -> Tuple[LearnerState, StepRecord]:
        """The whole update as one pure function: ``gradient_steps`` gradient steps scanned over the batches."""
        return jax.lax.scan(lambda learner, batch: self._gradient_step(learner, batch, timestep), learner, batches)

    def _gather_learner_state(self) -> LearnerState:
        return LearnerState(
            policy=self.policy.state_dict.params,
            target_policy=self.target_policy.state_dict.params,
            critic=self.critic.state_dict.params,
            target_critic=self.target_critic.state_dict.params,
            policy_optimizer=self.policy_optimizer,
            critic_optimizer=self.critic_optimizer,
            state_preprocessor=self._state_functional.state,
            policy_learning_rate=device_scalar(self._policy_learning_rate, jnp.float32),
            critic_learning_rate=device_scalar(self._critic_learning_rate, jnp.float32),
        )

    def _commit_learner_state(self, learner: LearnerState) -> None:
        for role in ("policy", "target_policy", "critic", "target_critic"):
            model = self.models[role]
            model.state_dict = model.state_dict.replace(params=getattr(learner, role))
        self.policy_optimizer = learner.policy_optimizer
        self.critic_optimizer = learner.critic_optimizer
        self._state_functional.state = learner.state_preprocessor
        self._policy_learning_rate = learner.policy_learning_rate
        self._critic_learning_rate = learner.critic_learning_rate

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        batches = Batch(*sample_batches(self.memory, neutral.BATCH_NAMES, cfg["batch_size"], cfg["gradient_steps"]))
        learner, packed = self._update_fn(self._gather_learner_state(), batches, np.int32(timestep))
        records = self._packed_learn.unpack(packed)  # one transfer: the flags to check and the numbers to track
        self._check_update(timestep, learner, records.finite)
        self._commit_learner_state(learner)

        for tag, values in self._tracked(records).items():
            for step in range(cfg["gradient_steps"]):
                self.track_data(tag, values[step])

    def _tracked(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags, one value per gradient step (the last axis): tracked by
        ``_update`` here, and written per step by ``CompiledTrainer``. The learning rates are tracked with a schedule,
        or with ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {"Loss / Policy loss": records.policy_loss, "Loss / Critic loss": records.critic_loss}
        for index, reduction in enumerate(("max", "min", "mean")):
            tracked[f"Q-network / Q1 ({reduction})"] = records.q_values[..., index]
            tracked[f"Target / Target ({reduction})"] = records.targets[..., index]
        if self._schedule is not None or learning_rates:
            tracked["Learning / Policy learning rate"] = records.learning_rates[..., 0]
            tracked["Learning / Critic learning rate"] = records.learning_rates[..., 1]
        return tracked

    # -- the compiled form: CompiledTrainer composes the same pure functions as the hooks above ------------------
    # (``_compiled_act`` is ``act``'s ``_deterministic_actions`` plus the exploration noise, drawn from the run's
    # acting key instead of the host ``Noise``; ``transition_to_store`` what ``record_transition`` stores, and
    # ``_learn`` the update, on batches drawn from the replay kept as arrays in the run's state)

    _batch_type = Batch  # the replay's fields, in the order of sample_batches
    # numbers read when the agent is built or that shape the compiled function: not sweepable in a compiled run
    _compiled_fixed_keys = (  # besides off_policy.REPLAY_FIXED_KEYS
        "grad_norm_clip",
    )

    def _compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        return compiled_replay_obstacles(self) + compiled_noise_obstacles(self.cfg, ("exploration",))

    def _compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act`` inside a compiled run: :meth:`_deterministic_actions` with the learner's parameters and
        statistics, plus the decaying exploration noise drawn from ``key`` (the run's acting stream)."""
        key, noise_key = jax.random.split(key)
        actions = self._deterministic_actions(learner.policy, learner.state_preprocessor, states)
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

    def _compiled_learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array, key: jax.Array) -> tuple:
        """``_update``'s compiled call (``key`` is not used: DDPG draws nothing besides the rows)."""
        return self._learn(learner, batches, timestep)

    def _fresh_learner(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """``learner`` with new parameters for the policy and the critic drawn from ``key`` (the models'
        initialisers; the targets start as copies) and fresh optimizer states (pure: one per seed in a vmapped run).
        The preprocessor's statistics and the learning rates are kept."""
        policy_key, critic_key = jax.random.split(key)
        policy = self.policy.initial_params("policy", policy_key)
        critic = self.critic.initial_params("critic", critic_key)
        return learner._replace(
            policy=policy,
            target_policy=policy,
            critic=critic,
            target_critic=critic,
            policy_optimizer=fresh_optimizer(learner.policy_optimizer, policy),
            critic_optimizer=fresh_optimizer(learner.critic_optimizer, critic),
        )

    def _check_update(self, timestep: int, learner: LearnerState, finite: np.ndarray) -> None:
        """Raise naming the first non-finite quantity, in the order of the gradient steps (nothing committed yet)."""
        if finite.all():
            return
        names = neutral.step_flag_names(
            self.cfg["gradient_steps"], non_finite_note(self._non_finite_parameters(learner))
        )
        check_named_flags("DDPG", timestep, names, finite.reshape(-1).tolist())

    @staticmethod
    def _non_finite_parameters(learner: LearnerState) -> list:
        return [
            f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the {role} model"
            for role, params in (("critic", learner.critic), ("policy", learner.policy))
            for path, leaf in jax.tree_util.tree_leaves_with_path(params)
            if not np.isfinite(np.asarray(leaf)).all()
        ]
