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

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents import sac as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, default_target_entropy
from skrl_like.core.agents.privileged import PRIVILEGED_PREPROCESSOR, build_privileged_preprocessor, critic_states
from skrl_like.core.agents.sac import SAC_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import Transition
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    fresh_optimizer,
    make_adam,
    make_scheduler,
    td_targets,
)
from skrl_like.jax.agents.off_policy import (
    REPLAY_FIXED_KEYS,
    LogEntropyCoefficient,
    compile_packed_update,
    compiled_replay_obstacles,
    create_replay_tensors,
    init_target,
    learn_deferred,
    max_min_mean,
    max_min_mean_tags,
    polyak_targets,
    preprocess_privileged,
    q_values,
    track_gradient_steps,
    update_critics,
    warn_if_identical,
)
from skrl_like.jax.models import GaussianMixin

__all__ = ["SAC", "SAC_DEFAULT_CONFIG"]

CRITICS, TARGET_CRITICS = ("critic_1", "critic_2"), ("target_critic_1", "target_critic_2")


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
    log_entropy_coefficient: Any  # ``{"params": (1,)}``
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    actor_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    entropy_learning_rate: jax.Array  # not scheduled (skrl)
    scheduler_steps: jax.Array  # the learning-rate schedulers' steps so far (what LinearLR's factor depends on)
    key: jax.Array  # the agent's one random stream: acting and the update draw from it
    privileged_state_preprocessor: Any = ()  # the privileged states' running statistics (``()``: none)


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


class SAC(Agent):
    """Soft Actor-Critic.

    :param models: ``{"policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``, each with parameters
        (``model.init_state_dict(role)``): a ``GaussianMixin`` policy and four Q-functions of states and taken actions
        with one output each; each target has its critic's parameter tree (it starts as a copy).
    :param memory: a replay memory (``batch_size`` rows at least), or a list of memories (the first one is sampled).
    :param action_space: the ``Box`` action space of one environment.
    :param cfg: keys of ``SAC_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _privileged_state_roles = neutral.ROLES[1:]  # asymmetric critics: the critics and their targets
    learner_type = LearnerState
    learning_rate_fields = {
        "actor_learning_rate": "actor_learning_rate",
        "critic_learning_rate": "critic_learning_rate",
        "entropy_learning_rate": "entropy_learning_rate",  # with learn_entropy
    }
    default_config = SAC_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        check_action_space("SAC", action_space, "Box")

    def _setup(self) -> None:
        cfg = self.cfg
        self._require_models(neutral.ROLES)
        neutral.check_gaussian_policy(self.models["policy"], (GaussianMixin,))
        self._adopt_models(neutral.ROLES)
        self._check_model_outputs(policy_roles=("policy",), critic_roles=neutral.ROLES[1:])
        check_batch_size("SAC", cfg["batch_size"], self.memory)
        warn_if_identical("SAC", self.models, *CRITICS)
        for target, critic in zip(TARGET_CRITICS, CRITICS):
            init_target("SAC", self.models, target, critic)

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])

        # one Adam per model (each clips its own gradients [compat]); the update passes the rates (see make_adam)
        self._scheduler_class = cfg["learning_rate_scheduler"]
        self._learning_rate_schedule = make_scheduler(
            self._scheduler_class, cfg["learning_rate_scheduler_kwargs"], self.learner_type
        )
        self._actor_learning_rate = cfg["actor_learning_rate"]
        self._critic_learning_rate = cfg["critic_learning_rate"]
        self._start_learning_rate_schedule(("actor_learning_rate", "critic_learning_rate"))
        self._entropy_learning_rate = cfg["entropy_learning_rate"]
        self._make_optimizers(
            {"policy": cfg["actor_learning_rate"], **dict.fromkeys(CRITICS, cfg["critic_learning_rate"])}
        )

        # the entropy coefficient alpha, learned as log(alpha); log(alpha) itself is not checkpointed [compat]
        self.log_entropy_coefficient = LogEntropyCoefficient(cfg["initial_entropy_value"], self.device)
        self.entropy_optimizer = ()
        self._target_entropy = 0.0
        if cfg["learn_entropy"]:
            target_entropy = cfg["target_entropy"]
            self._target_entropy = (
                default_target_entropy(self.action_space) if target_entropy is None else target_entropy
            )
            self.entropy_optimizer = make_adam(self.log_entropy_coefficient, cfg["entropy_learning_rate"], None)
            self._register_optimizer("entropy_optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)
        self._privileged_state_functional = FunctionalPreprocessor(self.checkpoint_modules.get(PRIVILEGED_PREPROCESSOR))

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.float32)
        self._create_privileged_state_tensors(jnp.float32)
        self._key = self._split_run_key()
        self._act_fn = jax.jit(self._sample_actions)
        compile_packed_update(self)  # the report (finite flags, tracked numbers): one host transfer per update

    def learning_rate_keys(self) -> Tuple[str, ...]:
        keys = tuple(self.learning_rate_fields)
        return keys if self.cfg["learn_entropy"] else keys[:-1]  # without learn_entropy alpha is no learned rate

    # -- acting -------------------------------------------------------------------------------------------------

    def _sample_actions(
        self, policy_params: Any, state_statistics: Any, states: jax.Array, key: jax.Array, acting: Any = None
    ) -> tuple:
        """One dispatch per step: ``(actions, outputs, key)`` sampled from the policy (``acting``: the policy's
        further inputs, :meth:`_acting_inputs`)."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        inputs = {"states": processed, "key": subkey, **(acting or {})}
        actions, _, outputs = self.policy.act(inputs, role="policy", params=policy_params)
        return actions, outputs, key

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """Sample actions from the policy (uniformly at random before ``random_timesteps``)."""
        if self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": self._state_preprocessor(states)}, role="policy")
        actions, outputs, self._key = self._act_fn(
            self.policy.state_dict.params, self._state_functional.state, states, self._key, self._acting_inputs()
        )
        if not self._jax:  # the NumPy backend
            actions = np.asarray(actions)
        return actions, None, outputs

    # -- learning: small pure updates, composed by _gradient_step ------------------------------------------------

    def _soft_targets(self, learner: LearnerState, batch: Transition, next_states: Any, alpha: Any, key: Any) -> Any:
        """Soft TD targets: a fresh next action from the current policy, the smaller target Q (the target critics read
        the privileged next states where they ask for them), minus alpha log pi."""
        sequence = self._sequence_inputs(batch)  # what every model reads beside its states (hidden states)
        next_actions, next_log_prob, _ = self.policy.act(
            {"states": next_states, "key": key, **sequence}, role="policy", params=learner.policy
        )
        _, next_states = critic_states(batch.extras, None, next_states)
        targets = [getattr(learner, role) for role in TARGET_CRITICS]
        target_q1, target_q2 = q_values(self.models, TARGET_CRITICS, targets, next_states, next_actions, sequence)
        next_values = jnp.minimum(target_q1, target_q2) - alpha * next_log_prob
        return jax.lax.stop_gradient(
            td_targets(batch.rewards, batch.terminated, next_values, self.cfg["discount_factor"])
        )

    def _policy_loss(
        self, policy_params: Any, learner: LearnerState, batch: Transition, states: Any, alpha: Any, key: Any
    ) -> tuple:
        """``mean(alpha * log pi(a~|s) - min(Q1, Q2)(s, a~))`` with reparameterised ``a~`` (pure): ``(loss, aux)``."""
        sequence = self._sequence_inputs(batch)
        inputs = {"states": states, "key": key, **sequence}
        actions, log_prob, _ = self.policy.act(inputs, role="policy", params=policy_params)
        states, _ = critic_states(batch.extras, states, None)  # the critics' view: privileged states where asked
        q1, q2 = q_values(self.models, CRITICS, [learner.critic_1, learner.critic_2], states, actions, sequence)
        return jnp.mean(alpha * log_prob - jnp.minimum(q1, q2)), (log_prob, q1, q2)

    def update_actor(self, learner: LearnerState, batch: Transition, states: Any, alpha: Any, key: Any) -> tuple:
        """The policy's Adam step, scored by the (just stepped) critics: ``(learner, loss, (log_prob, Q1, Q2))``."""
        (loss, aux), grad = jax.value_and_grad(self._policy_loss, has_aux=True)(
            learner.policy, learner, batch, states, alpha, key
        )
        optimizer, policy = learner.policy_optimizer.update(grad, learner.policy, learner.actor_learning_rate)
        return learner._replace(policy=policy, policy_optimizer=optimizer), loss, aux

    def update_alpha(self, learner: LearnerState, log_prob: Any) -> tuple:
        """log(alpha)'s Adam step: it rises while the policy's entropy (of the actor step's actions) is below the
        target: ``(learner, loss)``."""
        sampled_entropy_term = jax.lax.stop_gradient(log_prob + self._target_entropy)
        loss, grad = jax.value_and_grad(lambda log_alpha: -jnp.mean(log_alpha["params"] * sampled_entropy_term))(
            learner.log_entropy_coefficient
        )
        optimizer, log_alpha = learner.entropy_optimizer.update(
            grad, learner.log_entropy_coefficient, learner.entropy_learning_rate
        )
        return learner._replace(entropy_optimizer=optimizer, log_entropy_coefficient=log_alpha), loss

    def _gradient_step(self, learner: LearnerState, batch: Transition, timestep: jax.Array) -> tuple:
        """One SAC gradient step on one batch (pure): critics, actor, entropy coefficient, targets, schedule."""
        cfg = self.cfg
        learner, batch = preprocess_privileged(self, learner, batch)  # where the critics read them
        key, next_key, actor_key = jax.random.split(learner.key, 3)
        alpha = jnp.exp(learner.log_entropy_coefficient["params"])
        # the statistics see both the states and the next states (skrl's order)
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)

        target_values = self._soft_targets(learner, batch, next_states, alpha, next_key)
        # each critic with its own gradient; the loss reported is the mean of both MSEs [compat]
        critic_view, _ = critic_states(batch.extras, states, None)  # the privileged states where the critics ask
        learner, critic_loss, _ = update_critics(
            self.models, learner, CRITICS, critic_view, batch.actions, target_values, self._sequence_inputs(batch)
        )
        learner, policy_loss, (log_prob, q1, q2) = self.update_actor(learner, batch, states, alpha, actor_key)
        entropy_loss = jnp.zeros(())
        if cfg["learn_entropy"]:
            learner, entropy_loss = self.update_alpha(learner, log_prob)
        # targets follow their critics; the learning rates follow the schedule (skrl's multiplicative JAX rule)
        rates = self._scheduled_rates(learner, ("actor_learning_rate", "critic_learning_rate"), timestep)
        learner = polyak_targets(learner, CRITICS, cfg["polyak"])._replace(
            **rates, state_preprocessor=statistics, key=key
        )

        losses = (critic_loss / 2, policy_loss) + ((entropy_loss,) if cfg["learn_entropy"] else ())
        finite = jnp.stack(
            [all_finite(x) for x in (batch.rewards, states, next_states, *losses)]
            + [all_finite((learner.policy, learner.critic_1, learner.critic_2))]
        )
        record = StepRecord(
            critic_loss=critic_loss / 2,
            policy_loss=policy_loss,
            entropy_loss=entropy_loss,
            entropy_coefficient=jnp.exp(learner.log_entropy_coefficient["params"])[0],
            q1=max_min_mean(q1),
            q2=max_min_mean(q2),
            target=max_min_mean(target_values),
            actor_learning_rate=learner.actor_learning_rate,
            critic_learning_rate=learner.critic_learning_rate,
            finite=finite,
        )
        return learner, record

    def _learn(self, learner: LearnerState, batches: Transition, timestep: jax.Array) -> Tuple[LearnerState, Any]:
        """The whole update as one pure function: ``gradient_steps`` gradient steps scanned over pre-drawn batches."""
        return jax.lax.scan(lambda learner, batch: self._gradient_step(learner, batch, timestep), learner, batches)

    def _update(self, timestep: int, timesteps: int) -> None:
        learn_deferred(self, timestep, self._replay_batches())  # the privileged states where the critics read them

    def _handle_report(self, timestep: int, packed: np.ndarray) -> None:
        track_gradient_steps(self, timestep, packed)

    def tracked_values(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under its TensorBoard tags, one value per gradient step (the last axis): tracked by
        ``_update`` here, and written per step by ``CompiledTrainer``. The learning rates are tracked with a schedule,
        or with ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {
            "Loss / Policy loss": records.policy_loss,
            "Loss / Critic loss": records.critic_loss,
            **max_min_mean_tags("Q-network / Q1", records.q1),
            **max_min_mean_tags("Q-network / Q2", records.q2),
            **max_min_mean_tags("Target / Target", records.target),
        }
        if self.cfg["learn_entropy"]:
            tracked["Loss / Entropy loss"] = records.entropy_loss
            tracked["Coefficient / Entropy coefficient"] = records.entropy_coefficient
        if self._learning_rate_schedule is not None or learning_rates:
            # the rates after the update's last step, at every step
            steps = records.critic_loss.shape
            tracked["Learning / Policy learning rate"] = np.broadcast_to(records.actor_learning_rate[..., -1:], steps)
            tracked["Learning / Critic learning rate"] = np.broadcast_to(records.critic_learning_rate[..., -1:], steps)
        return tracked

    def check_update(self, timestep: int, learner: LearnerState, records: StepRecord) -> None:
        """Raise naming the first non-finite quantity (in the order of the steps). With writing off nothing has been
        committed then, so the agent keeps its last finite state; with writing on the report is read at the next
        write or checkpoint step (``_keep_report``) and ``learner`` is the agent's state then."""
        finite = np.asarray(records.finite)
        if finite.all():
            return
        note = non_finite_note(self._non_finite_parameter_names(learner, ("policy", *CRITICS)))
        names = neutral.step_flag_names(self.cfg["gradient_steps"], self.cfg["learn_entropy"], note)
        check_named_flags("SAC", timestep, names, finite.reshape(-1).tolist())

    # -- the compiled form (the protocol of jax/agents/base.py): ``act``'s sample and the update, on batches drawn
    # from the replay kept as arrays in the run's state

    # numbers read when the agent is built or that shape the compiled function: not sweepable in a compiled run
    compiled_fixed_keys = REPLAY_FIXED_KEYS + ("initial_entropy_value", "target_entropy", "grad_norm_clip")

    def compiled_obstacles(self) -> List[str]:
        return compiled_replay_obstacles(self)

    def compiled_act(self, learner: LearnerState, key: Any, states: Any, timestep: Any, timesteps: int) -> tuple:
        """``act``'s sample with the learner's parameters, statistics and key (the agent's one random stream, which
        the update splits too, as ``act`` and ``_update`` share ``self._key``); ``key`` is not used."""
        actions, _, learner_key = self._sample_actions(learner.policy, learner.state_preprocessor, states, learner.key)
        return learner._replace(key=learner_key), key, actions

    def compiled_learn(self, learner: LearnerState, batches: Transition, timestep: Any, key: Any) -> tuple:
        return self._learn(learner, batches, timestep)  # SAC's update draws from the learner's key

    def _fresh_extras(self, learner: LearnerState, key: jax.Array) -> LearnerState:
        """The initial entropy coefficient, a fresh entropy optimizer and a new random stream."""
        log_alpha = LogEntropyCoefficient.initial_params(self.cfg["initial_entropy_value"])
        entropy_optimizer = fresh_optimizer(learner.entropy_optimizer, log_alpha)
        return learner._replace(log_entropy_coefficient=log_alpha, entropy_optimizer=entropy_optimizer, key=key)
