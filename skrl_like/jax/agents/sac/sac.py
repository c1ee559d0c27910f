"""Soft Actor-Critic (SAC), JAX backend.

Haarnoja et al., "Soft Actor-Critic Algorithms and Applications", 2018. The same algorithm as the torch backend
(same config, same update rule), written the PureJaxRL way: one gradient step (both critics, the actor, the entropy
coefficient and the polyak update of both targets) is one pure function of explicit state (a :class:`LearnerState`)
and a pre-drawn replay batch; an update runs its ``gradient_steps`` steps in one ``lax.scan`` inside one jitted call
and returns finite flags that the host checks before committing anything. Shapes are static, so nothing recompiles
after the first update.

Unlike skrl 1.4.3's JAX SAC, each critic is stepped with its own gradient (skrl steps both with critic 2's), twin
critics start different (models initialised without a key each get their own, where skrl gives all the same key:
``min(Q1, Q2)`` is then a single Q-function; critics that still start identical are warned about), and the policy's
noise comes from a key split off the learner's key at every step (skrl's jitted actor loss draws the same noise at every step: the
model's key counter only advances while tracing).
"""

import math
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

import flax.struct
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents import sac as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import TORCH_ONLY_KEYS, check_config
from skrl_like.core.agents.off_policy import (
    check_action_space,
    check_batch_size,
    default_target_entropy,
)
from skrl_like.core.agents.sac import SAC_DEFAULT_CONFIG  # JAX adds no keys
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
    compiled_replay_obstacles,
    create_replay_tensors,
    device_scalar,
    init_target,
    sample_batches,
    warn_if_identical,
)
from skrl_like.jax.models import GaussianMixin
from skrl_like.jax.utils.distributed import compile_update, mean_over_processes

__all__ = ["SAC", "SAC_DEFAULT_CONFIG"]


class _Parameters(flax.struct.PyTreeNode):
    params: Any


class LogEntropyCoefficient:
    """``log(alpha)`` as the one-parameter "model" its Adam optimizer is built on (``state_dict.params`` is
    ``{"params": [log(alpha)]}``, skrl's layout)."""

    def __init__(self, entropy_coefficient: float, device: Any = None) -> None:
        self.device = device
        with jax.default_device(device):
            self.state_dict = _Parameters({"params": jnp.array([math.log(entropy_coefficient)], jnp.float32)})

    @property
    def value(self) -> jax.Array:
        return self.state_dict.params["params"]


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any
    critic_1: Any
    critic_2: Any
    target_critic_1: Any
    target_critic_2: Any
    policy_optimizer: Any
    critic_1_optimizer: Any
    critic_2_optimizer: Any
    entropy_optimizer: Any  # ``()`` without learn_entropy
    log_entropy_coefficient: jax.Array  # (1,)
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    actor_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    entropy_learning_rate: jax.Array  # not scheduled (skrl)
    key: jax.Array


class Batch(NamedTuple):
    """One replay batch, ``(batch_size, size)`` per field (``(gradient_steps, batch_size, size)`` when stacked)."""

    states: jax.Array
    actions: jax.Array
    rewards: jax.Array
    next_states: jax.Array
    terminated: jax.Array
    truncated: jax.Array


class StepRecord(NamedTuple):
    """What one gradient step reports (the scan stacks them)."""

    critic_loss: jax.Array
    policy_loss: jax.Array
    entropy_loss: jax.Array
    entropy_coefficient: jax.Array
    q1: jax.Array  # (max, min, mean) of the critics on the actor's actions
    q2: jax.Array
    target: jax.Array  # (max, min, mean) of the TD targets
    actor_learning_rate: jax.Array  # after the step
    critic_learning_rate: jax.Array
    finite: jax.Array  # one per neutral.step_flag_names entry of this step


def _statistics(values: jax.Array) -> jax.Array:
    return jnp.stack([values.max(), values.min(), values.mean()])


class SAC(Agent):
    """Soft Actor-Critic.

    :param models: ``{"policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``, each with parameters
        (``model.init_state_dict(role)``): a ``GaussianMixin`` policy and four Q-functions of states and taken actions
        with one output each; each target has its critic's parameter tree (it starts as a copy).
    :param memory: a replay memory (``batch_size`` rows at least), or a list of memories (the first one is sampled).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space of one environment.
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``SAC_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and every
        value is checked against its documented type and range.
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _learning_rates = {
        "actor_learning_rate": "actor_learning_rate",
        "critic_learning_rate": "critic_learning_rate",
        "entropy_learning_rate": "entropy_learning_rate",  # with learn_entropy
    }

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(SAC_DEFAULT_CONFIG, cfg, "SAC cfg", ignored=TORCH_ONLY_KEYS)
        check_config(cfg, "SAC cfg")
        check_action_space("SAC", action_space, "Box")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(neutral.ROLES)
        neutral.check_gaussian_policy(self.models["policy"], (GaussianMixin,))
        for role in neutral.ROLES:
            if getattr(self.models[role], "state_dict", None) is None:
                raise ValueError(
                    f"SAC: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self._check_model_outputs(policy_roles=("policy",), critic_roles=neutral.ROLES[1:])
        check_batch_size("SAC", cfg["batch_size"], self.memory)

        self.policy = self.models["policy"]
        self.critic_1, self.critic_2 = self.models["critic_1"], self.models["critic_2"]
        self.target_critic_1, self.target_critic_2 = self.models["target_critic_1"], self.models["target_critic_2"]
        for role in neutral.ROLES:
            self.checkpoint_modules[role] = self.models[role]
        warn_if_identical("SAC", self.models, "critic_1", "critic_2")
        init_target("SAC", self.models, "target_critic_1", "critic_1")
        init_target("SAC", self.models, "target_critic_2", "critic_2")

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])

        # one Adam per model (each clips its own gradients [compat]); the update passes the rates (see make_adam)
        self._scheduler = cfg["learning_rate_scheduler"]
        self._schedule = make_scheduler(self._scheduler, cfg["learning_rate_scheduler_kwargs"])
        self._actor_learning_rate = cfg["actor_learning_rate"]
        self._critic_learning_rate = cfg["critic_learning_rate"]
        for role, learning_rate in (
            ("policy", cfg["actor_learning_rate"]),
            ("critic_1", cfg["critic_learning_rate"]),
            ("critic_2", cfg["critic_learning_rate"]),
        ):
            optimizer = make_adam(self.models[role], learning_rate, self._schedule, cfg["grad_norm_clip"])
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")

        # the entropy coefficient alpha, learned as log(alpha); log(alpha) itself is not checkpointed [compat]
        self.log_entropy_coefficient = LogEntropyCoefficient(cfg["initial_entropy_value"], self.device)
        self.entropy_optimizer = ()
        self._target_entropy = 0.0
        if cfg["learn_entropy"]:
            target_entropy = cfg["target_entropy"]
            self._target_entropy = default_target_entropy(action_space) if target_entropy is None else target_entropy
            self.entropy_optimizer = make_adam(self.log_entropy_coefficient, cfg["entropy_learning_rate"], None)
            self._entropy_learning_rate = cfg["entropy_learning_rate"]
            self._register_optimizer("entropy_optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.float32)
        # this agent's own random stream, split off the run's key (set_seed makes it reproducible)
        config.jax.key, self._key = jax.random.split(config.jax.key)
        self._act_fn = jax.jit(self._sample)
        # the report (finite flags, tracked numbers) comes back packed: one host transfer per update
        self._packed_learn = PackedReport(self._learn)
        self._update_fn = compile_update(self._packed_learn)  # jax.jit, or one SPMD program over the processes

    # -- acting -------------------------------------------------------------------------------------------------

    def _sample(self, policy_params: Any, state_statistics: Any, states: jax.Array, key: jax.Array) -> Tuple[Any, ...]:
        """One dispatch per step: sample actions from the policy."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        actions, _, outputs = self.policy.act({"states": processed, "key": subkey}, role="policy", params=policy_params)
        return actions, outputs, key

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """Sample actions from the policy (uniformly at random before ``random_timesteps``)."""
        if self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": self._state_preprocessor(states)}, role="policy")
        actions, outputs, self._key = self._act_fn(
            self.policy.state_dict.params, self._state_functional.state, states, self._key
        )
        if not self._jax:  # the NumPy backend
            actions = np.asarray(actions)
        return actions, None, outputs

    # -- learning -----------------------------------------------------------------------------------------------

    def _critic_loss(self, params: Any, critic: Any, role: str, batch: Batch, target_values: jax.Array) -> Tuple:
        """One critic's MSE to the TD targets (pure): ``(loss, values)``."""
        values, _, _ = critic.act({"states": batch.states, "taken_actions": batch.actions}, role=role, params=params)
        return jnp.mean((values - target_values) ** 2), values

    def _policy_loss(
        self, policy_params: Any, learner: LearnerState, states: jax.Array, alpha: jax.Array, key: jax.Array
    ) -> Tuple:
        """``mean(alpha * log pi(a~|s) - min(Q1, Q2)(s, a~))`` with reparameterised ``a~`` (pure): ``(loss, aux)``."""
        actions, log_prob, _ = self.policy.act({"states": states, "key": key}, role="policy", params=policy_params)
        inputs = {"states": states, "taken_actions": actions}
        q1, _, _ = self.critic_1.act(inputs, role="critic_1", params=learner.critic_1)
        q2, _, _ = self.critic_2.act(inputs, role="critic_2", params=learner.critic_2)
        return jnp.mean(alpha * log_prob - jnp.minimum(q1, q2)), (log_prob, q1, q2)

    def _gradient_step(self, learner: LearnerState, batch: Batch, timestep: jax.Array) -> Tuple[LearnerState, Any]:
        """One SAC gradient step on one batch (pure): critics, actor, entropy coefficient, targets."""
        cfg = self.cfg
        key, next_key, actor_key = jax.random.split(learner.key, 3)
        alpha = jnp.exp(learner.log_entropy_coefficient)

        # the statistics see both the states and the next states (skrl's order)
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)
        batch = batch._replace(states=states, next_states=next_states)

        # soft TD target: a fresh next action from the current policy, the smaller target Q, minus alpha log pi
        next_actions, next_log_prob, _ = self.policy.act(
            {"states": next_states, "key": next_key}, role="policy", params=learner.policy
        )
        inputs = {"states": next_states, "taken_actions": next_actions}
        target_q1, _, _ = self.target_critic_1.act(inputs, role="target_critic_1", params=learner.target_critic_1)
        target_q2, _, _ = self.target_critic_2.act(inputs, role="target_critic_2", params=learner.target_critic_2)
        next_values = jnp.minimum(target_q1, target_q2) - alpha * next_log_prob
        target_values = jax.lax.stop_gradient(
            td_targets(batch.rewards, batch.terminated, next_values, cfg["discount_factor"])
        )

        # critic step: each critic with its own gradient; the loss reported is the mean of both MSEs [compat]
        critic_learning_rate = learner.critic_learning_rate
        critic_grad = jax.value_and_grad(self._critic_loss, has_aux=True)
        (critic_1_loss, _), critic_1_grad = critic_grad(
            learner.critic_1, self.critic_1, "critic_1", batch, target_values
        )
        (critic_2_loss, _), critic_2_grad = critic_grad(
            learner.critic_2, self.critic_2, "critic_2", batch, target_values
        )
        # both critics' gradients averaged over the processes together: one collective
        critic_1_grad, critic_2_grad = mean_over_processes((critic_1_grad, critic_2_grad))
        critic_1_optimizer, critic_1 = learner.critic_1_optimizer.apply(
            critic_1_grad, learner.critic_1, critic_learning_rate
        )
        critic_2_optimizer, critic_2 = learner.critic_2_optimizer.apply(
            critic_2_grad, learner.critic_2, critic_learning_rate
        )
        critic_loss = (critic_1_loss + critic_2_loss) / 2
        learner = learner._replace(
            critic_1=critic_1,
            critic_2=critic_2,
            critic_1_optimizer=critic_1_optimizer,
            critic_2_optimizer=critic_2_optimizer,
        )

        # policy step, scored by the freshly stepped critics
        (policy_loss, (log_prob, q1, q2)), policy_grad = jax.value_and_grad(self._policy_loss, has_aux=True)(
            learner.policy, learner, states, alpha, actor_key
        )

        # entropy coefficient: log(alpha) rises while the policy's entropy is below the target (its gradient, from
        # the same sampled actions, is averaged over the processes with the policy's: one collective)
        entropy_optimizer, log_entropy_coefficient = learner.entropy_optimizer, learner.log_entropy_coefficient
        entropy_loss = jnp.zeros(())
        if cfg["learn_entropy"]:
            sampled_entropy_term = jax.lax.stop_gradient(log_prob + self._target_entropy)

            def entropy_objective(params: Any) -> jax.Array:
                return -jnp.mean(params["params"] * sampled_entropy_term)

            entropy_loss, entropy_grad = jax.value_and_grad(entropy_objective)({"params": log_entropy_coefficient})
            policy_grad, entropy_grad = mean_over_processes((policy_grad, entropy_grad))
            entropy_optimizer, entropy_params = entropy_optimizer.apply(
                entropy_grad, {"params": log_entropy_coefficient}, learner.entropy_learning_rate
            )
            log_entropy_coefficient = entropy_params["params"]
        else:
            policy_grad = mean_over_processes(policy_grad)
        policy_optimizer, policy = learner.policy_optimizer.apply(
            policy_grad, learner.policy, learner.actor_learning_rate
        )

        # targets follow their critics; the learning rates follow the schedule (skrl's multiplicative JAX rule)
        learner = learner._replace(
            policy=policy,
            policy_optimizer=policy_optimizer,
            entropy_optimizer=entropy_optimizer,
            log_entropy_coefficient=log_entropy_coefficient,
            target_critic_1=polyak_update(learner.target_critic_1, critic_1, cfg["polyak"]),
            target_critic_2=polyak_update(learner.target_critic_2, critic_2, cfg["polyak"]),
            state_preprocessor=statistics,
            actor_learning_rate=jnp.asarray(
                step_scheduler(self._scheduler, self._schedule, learner.actor_learning_rate, timestep, None),
                jnp.float32,
            ),
            critic_learning_rate=jnp.asarray(
                step_scheduler(self._scheduler, self._schedule, learner.critic_learning_rate, timestep, None),
                jnp.float32,
            ),
            key=key,
        )

        losses = (critic_loss, policy_loss) + ((entropy_loss,) if cfg["learn_entropy"] else ())
        finite = jnp.stack(
            [all_finite(x) for x in (batch.rewards, states, next_states, *losses)]
            + [all_finite((policy, critic_1, critic_2))]
        )
        record = StepRecord(
            critic_loss=critic_loss,
            policy_loss=policy_loss,
            entropy_loss=entropy_loss,
            entropy_coefficient=jnp.exp(log_entropy_coefficient)[0],
            q1=_statistics(q1),
            q2=_statistics(q2),
            target=_statistics(target_values),
            actor_learning_rate=learner.actor_learning_rate,
            critic_learning_rate=learner.critic_learning_rate,
            finite=finite,
        )
        return learner, record

    def _learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array) -> Tuple[LearnerState, StepRecord]:
        """The whole update as one pure function: ``gradient_steps`` gradient steps scanned over pre-drawn batches."""
        return jax.lax.scan(lambda learner, batch: self._gradient_step(learner, batch, timestep), learner, batches)

    # -- the compiled form: CompiledTrainer composes the same pure functions as the hooks above ------------------
    # (``_compiled_act`` is ``act``'s ``_sample``, ``transition_to_store`` what ``record_transition`` stores, and
    # ``_learn`` the update, on batches drawn from the replay kept as arrays in the run's state)

    _batch_type = Batch  # the replay's fields, in the order of sample_batches
    # numbers read when the agent is built or that shape the compiled function: not sweepable in a compiled run
    _compiled_fixed_keys = (  # besides off_policy.REPLAY_FIXED_KEYS
        "initial_entropy_value",
        "target_entropy",
        "grad_norm_clip",
    )

    def _compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        return compiled_replay_obstacles(self)

    def _compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act`` inside a compiled run: :meth:`_sample` with the learner's parameters, statistics and key (the
        agent's one random stream, which the update splits too, as ``act`` and ``_update`` share ``self._key``);
        ``key`` is not used."""
        actions, _, learner_key = self._sample(learner.policy, learner.state_preprocessor, states, learner.key)
        return learner._replace(key=learner_key), key, actions

    _compiled_acts_randomly = compiled_acts_randomly

    def _compiled_learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array, key: jax.Array) -> tuple:
        """``_update``'s compiled call (``key`` is not used: SAC's update draws from the learner's key)."""
        return self._learn(learner, batches, timestep)

    def _fresh_learner(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """``learner`` with new parameters for the policy and both critics drawn from ``key`` (the models'
        initialisers; the targets start as copies), fresh optimizer states, the initial entropy coefficient and a
        new random stream (pure: one per seed in a vmapped run). The preprocessor's statistics and the learning
        rates are kept."""
        policy_key, critic_1_key, critic_2_key, agent_key = jax.random.split(key, 4)
        policy = self.policy.initial_params("policy", policy_key)
        critic_1 = self.critic_1.initial_params("critic_1", critic_1_key)
        critic_2 = self.critic_2.initial_params("critic_2", critic_2_key)
        log_entropy_coefficient = jnp.full_like(
            learner.log_entropy_coefficient, math.log(self.cfg["initial_entropy_value"])
        )
        return learner._replace(
            policy=policy,
            critic_1=critic_1,
            critic_2=critic_2,
            target_critic_1=critic_1,
            target_critic_2=critic_2,
            policy_optimizer=fresh_optimizer(learner.policy_optimizer, policy),
            critic_1_optimizer=fresh_optimizer(learner.critic_1_optimizer, critic_1),
            critic_2_optimizer=fresh_optimizer(learner.critic_2_optimizer, critic_2),
            entropy_optimizer=fresh_optimizer(learner.entropy_optimizer, {"params": log_entropy_coefficient}),
            log_entropy_coefficient=log_entropy_coefficient,
            key=agent_key,
        )

    def _gather_learner_state(self) -> LearnerState:
        return LearnerState(
            policy=self.policy.state_dict.params,
            critic_1=self.critic_1.state_dict.params,
            critic_2=self.critic_2.state_dict.params,
            target_critic_1=self.target_critic_1.state_dict.params,
            target_critic_2=self.target_critic_2.state_dict.params,
            policy_optimizer=self.policy_optimizer,
            critic_1_optimizer=self.critic_1_optimizer,
            critic_2_optimizer=self.critic_2_optimizer,
            entropy_optimizer=self.entropy_optimizer,
            log_entropy_coefficient=self.log_entropy_coefficient.value,
            state_preprocessor=self._state_functional.state,
            actor_learning_rate=device_scalar(self._actor_learning_rate, jnp.float32),
            critic_learning_rate=device_scalar(self._critic_learning_rate, jnp.float32),
            entropy_learning_rate=device_scalar(getattr(self, "_entropy_learning_rate", 0.0), jnp.float32),
            key=self._key,
        )

    def _commit_learner_state(self, learner: LearnerState) -> None:
        for role in neutral.ROLES:
            model = self.models[role]
            model.state_dict = model.state_dict.replace(params=getattr(learner, role))
        self.policy_optimizer = learner.policy_optimizer
        self.critic_1_optimizer = learner.critic_1_optimizer
        self.critic_2_optimizer = learner.critic_2_optimizer
        self.entropy_optimizer = learner.entropy_optimizer
        self.log_entropy_coefficient.state_dict = self.log_entropy_coefficient.state_dict.replace(
            params={"params": learner.log_entropy_coefficient}
        )
        self._state_functional.state = learner.state_preprocessor
        self._actor_learning_rate = learner.actor_learning_rate
        self._critic_learning_rate = learner.critic_learning_rate
        if self.cfg["learn_entropy"]:  # a compiled run may have swept it (without learn_entropy it is no rate)
            self._entropy_learning_rate = learner.entropy_learning_rate
        self._key = learner.key

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        batches = Batch(*sample_batches(self.memory, Batch._fields, cfg["batch_size"], cfg["gradient_steps"]))
        learner, packed = self._update_fn(self._gather_learner_state(), batches, np.int32(timestep))
        # one host transfer for the finite flags and the tracked values (a few numbers per gradient step)
        records = self._packed_learn.unpack(packed)
        self._check_update(timestep, learner, records)
        self._commit_learner_state(learner)

        if self.write_interval > 0:
            for tag, values in self._tracked(records).items():
                for step in range(cfg["gradient_steps"]):
                    self.track_data(tag, values[step])

    def _tracked(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags, one value per gradient step (the last axis): tracked by
        ``_update`` here, and written per step by ``CompiledTrainer``. The learning rates are tracked with a schedule,
        or with ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {"Loss / Policy loss": records.policy_loss, "Loss / Critic loss": records.critic_loss}
        for tag, values in (("Q-network / Q1", records.q1), ("Q-network / Q2", records.q2)):
            for index, reduction in enumerate(("max", "min", "mean")):
                tracked[f"{tag} ({reduction})"] = values[..., index]
        for index, reduction in enumerate(("max", "min", "mean")):
            tracked[f"Target / Target ({reduction})"] = records.target[..., index]
        if self.cfg["learn_entropy"]:
            tracked["Loss / Entropy loss"] = records.entropy_loss
            tracked["Coefficient / Entropy coefficient"] = records.entropy_coefficient
        if self._schedule is not None or learning_rates:
            # the rates after the update's last step, at every step
            steps = records.critic_loss.shape
            tracked["Learning / Policy learning rate"] = np.broadcast_to(records.actor_learning_rate[..., -1:], steps)
            tracked["Learning / Critic learning rate"] = np.broadcast_to(records.critic_learning_rate[..., -1:], steps)
        return tracked

    def _check_update(self, timestep: int, learner: LearnerState, records: StepRecord) -> None:
        """Raise naming the first non-finite quantity (in the order of the steps); nothing has been committed then,
        so the agent keeps its last finite state."""
        finite = np.asarray(records.finite)
        if finite.all():
            return
        note = non_finite_note(self._non_finite_parameters(learner))
        names = neutral.step_flag_names(self.cfg["gradient_steps"], self.cfg["learn_entropy"], note)
        check_named_flags("SAC", timestep, names, finite.reshape(-1).tolist())

    @staticmethod
    def _non_finite_parameters(learner: LearnerState) -> list:
        return [
            f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the {role} model"
            for role in ("policy", "critic_1", "critic_2")
            for path, leaf in jax.tree_util.tree_leaves_with_path(getattr(learner, role))
            if not np.isfinite(np.asarray(leaf)).all()
        ]
