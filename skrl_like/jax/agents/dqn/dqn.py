"""Deep Q-Network (DQN), JAX backend.

Mnih et al., "Human-level control through deep reinforcement learning", 2015. The same algorithm as the torch
backend (same config, same update rule), written the PureJaxRL way: acting (epsilon-greedy included) is one jitted
call with explicit random keys, and an update is one jitted pure function of explicit state (a
:class:`LearnerState`): a ``lax.scan`` over ``gradient_steps`` batches drawn beforehand, each step computing the TD
target ``y = r + gamma * (1 - done) * max_a Q_target(s', a)``, the loss ``MSE(Q(s, a), y)``, one Adam step and, when
the update falls on a target-update timestep (a traced flag, so both cases share one compilation), the polyak blend
of the target. Its report (finite flags and tracked values) stays on the device until the next write or checkpoint
step (:func:`~skrl_like.jax.agents.off_policy.learn_deferred`).
DDQN (:mod:`.ddqn`) is this class with another :meth:`DQN._next_values`.
"""

from typing import Any, Mapping, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core.agents import dqn as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.dqn import DQN_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, gradient_step_flag_names
from skrl_like.core.agents.off_policy import epsilon as off_policy_epsilon
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import (
    FunctionalPreprocessor,
    all_finite,
    make_adam,
    make_scheduler,
    polyak_update,
    td_targets,
)
from skrl_like.jax.agents.off_policy import (
    REPLAY_FIXED_KEYS,
    compile_packed_update,
    compiled_replay_obstacles,
    create_replay_tensors,
    epsilon_greedy,
    init_target,
    learn_deferred,
    sample_batches,
    track_gradient_steps,
)

__all__ = ["DQN", "DQN_DEFAULT_CONFIG"]


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    q_network: Any  # the online network's parameters
    target_q_network: Any
    optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    learning_rate: jax.Array
    scheduler_steps: jax.Array  # the learning-rate scheduler's steps so far (what LinearLR's factor depends on)


Batch = Transition  # one gradient step's transitions, ``(batch_size, size)`` each (stacked for the scan)


class StepRecord(NamedTuple):
    """One per gradient step (the scan stacks them)."""

    loss: jax.Array
    target_values: jax.Array  # (batch_size, 1)
    finite: jax.Array  # one flag per ``neutral.STEP_QUANTITIES``, then the parameters


class UpdateReport(NamedTuple):
    """What the host reads after an update: the tracked values (reduced in the compiled update, so tracking costs
    no further dispatch) and the finite flags ``(gradient_steps, len(neutral.STEP_QUANTITIES) + 1)``."""

    loss: jax.Array  # mean over the gradient steps
    target_max: jax.Array
    target_min: jax.Array
    target_mean: jax.Array
    learning_rate: jax.Array  # after the update
    finite: jax.Array


class DQN(Agent):
    """Deep Q-Network.

    :param models: ``{"q_network": ..., "target_q_network": ...}``: two deterministic models with parameters
        (``model.init_state_dict(role)``), of the same architecture, with one output per discrete action (the
        target starts as a copy and is never stepped by the optimizer).
    :param memory: a replay memory (e.g. ``RandomMemory(memory_size=..., num_envs=...)``) of at least
        ``cfg["batch_size"]`` rows, or a list of memories (the first one is used for learning).
    :param action_space: the ``gymnasium.spaces.Discrete`` action space of one environment.
    :param cfg: keys of ``DQN_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    learner_type = LearnerState

    default_config = DQN_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        name = type(self).__name__
        neutral.check_exploration(name, cfg["exploration"])
        check_action_space(name, action_space, "Discrete")

    def _setup(self) -> None:
        cfg = self.cfg
        name = type(self).__name__
        self._require_models(("q_network", "target_q_network"))
        init_target(name, self.models, "target_q_network", "q_network")  # also: both have parameters
        self._check_q_outputs(("q_network", "target_q_network"))
        check_batch_size(name, cfg["batch_size"], self.memory)

        self.q_network = self.models["q_network"]
        self.target_q_network = self.models["target_q_network"]
        self.checkpoint_modules["q_network"] = self.q_network
        self.checkpoint_modules["target_q_network"] = self.target_q_network

        # no warm-up without exploration: the agent then always acts greedily (skrl's order of the checks)
        random_timesteps = cfg["random_timesteps"] if cfg["exploration"]["timesteps"] else 0
        self.schedule = OffPolicySchedule(cfg["learning_starts"], random_timesteps, cfg["update_interval"])
        self._learning_rate = cfg["learning_rate"]
        # with a schedule the update passes its own rate to every step (skrl's JAX rule)
        self._scheduler_class = cfg["learning_rate_scheduler"]
        self._learning_rate_schedule = make_scheduler(
            self._scheduler_class, cfg["learning_rate_scheduler_kwargs"], self.learner_type
        )
        self._start_learning_rate_schedule(("learning_rate",))
        self.optimizer = make_adam(self.q_network, cfg["learning_rate"], self._learning_rate_schedule)
        self._register_optimizer("optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))

    def _check_q_outputs(self, roles: Tuple[str, ...]) -> None:
        """One Q-value per discrete action, checked now instead of failing (or indexing wrongly) at the first step."""
        for role in roles:
            _, size = self._output_size(self.models[role], role)
            if size is not None and size != self.action_space.n:
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(self.models[role]).__name__}) produces {size} "
                    f"outputs per sample, but the action space {self.action_space} needs one Q-value per action: "
                    f"give its last layer {self.action_space.n} outputs"
                )

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the replay memory's tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.int32)
        self._key = self._split_run_key()
        self._act_fn = jax.jit(self._act)
        compile_packed_update(self)  # the report (finite flags, tracked numbers): one host transfer per update

    # -- acting -------------------------------------------------------------------------------------------------

    def _act(
        self, params: Any, state_statistics: Any, states: jax.Array, key: jax.Array, epsilon: jax.Array
    ) -> Tuple[jax.Array, jax.Array, dict, jax.Array]:
        """One dispatch per step: ``(epsilon-greedy actions, greedy actions, outputs, next key)``; ``epsilon`` is
        traced (0: greedy), so its decay never recompiles."""
        key, random_key, explore_key = jax.random.split(key, 3)
        _, processed = self._state_functional(state_statistics, states)
        q_values, _, outputs = self.q_network.act({"states": processed}, role="q_network", params=params)
        greedy_actions = jnp.argmax(q_values, axis=-1, keepdims=True).astype(jnp.int32)
        random_actions = jax.random.randint(random_key, greedy_actions.shape, 0, self.action_space.n, jnp.int32)
        actions = epsilon_greedy(explore_key, random_actions, greedy_actions, epsilon)
        return actions, greedy_actions, outputs, key

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, None, dict]:
        """Epsilon-greedy actions ``(N, 1)``; returns ``(actions, None, outputs)`` where ``outputs`` are the
        Q-network's outputs with ``"mean_actions"``, the greedy actions (what a trainer's deterministic evaluation
        plays)."""
        epsilon = neutral.exploration_epsilon(timestep, self.cfg["exploration"])
        acts_randomly = self.schedule.acts_randomly(timestep)
        if acts_randomly and self.training:  # warm-up: no Q-values needed
            actions = self.q_network.random_act({"states": states}, role="q_network")[0]
            return (actions if self._jax else np.asarray(actions)), None, {}

        actions, greedy_actions, outputs, self._key = self._act_fn(
            self.q_network.state_dict.params,
            self._state_functional.state,
            states,
            self._key,
            self._to_device(np.float32(epsilon or 0.0)),  # crosses explicitly: a step makes no implicit transfer
        )
        if acts_randomly:
            actions = self.q_network.random_act({"states": states}, role="q_network")[0]
        elif epsilon is not None:
            self.track_data("Exploration / Exploration epsilon", epsilon)
        if not self._jax:
            actions, greedy_actions = np.asarray(actions), np.asarray(greedy_actions)
        return actions, None, {**outputs, "mean_actions": greedy_actions}

    # -- learning -----------------------------------------------------------------------------------------------

    def _next_values(self, learner: LearnerState, next_states: jax.Array) -> jax.Array:
        """DQN's bootstrap value: the target network's best Q-value, ``max_a Q_target(s', a)``."""
        next_q_values, _, _ = self.target_q_network.act(
            {"states": next_states}, role="target_q_network", params=learner.target_q_network
        )
        return jnp.max(next_q_values, axis=-1, keepdims=True)

    def _loss(self, params: Any, states: jax.Array, actions: jax.Array, target_values: jax.Array) -> jax.Array:
        """``MSE(Q(s, a), y)`` (pure)."""
        q_values, _, _ = self.q_network.act({"states": states}, role="q_network", params=params)
        q_values = jnp.take_along_axis(q_values, actions.astype(jnp.int32), axis=-1)
        return jnp.mean((q_values - target_values) ** 2)

    def _gradient_step(
        self, learner: LearnerState, batch: Batch, update_target: jax.Array, timestep: jax.Array
    ) -> Tuple[LearnerState, StepRecord]:
        """One gradient step on one batch (pure)."""
        cfg = self.cfg
        # statistics updated twice per step, with the states and the next states [compat]
        statistics, states = self._state_functional(learner.state_preprocessor, batch.states, train=True)
        statistics, next_states = self._state_functional(statistics, batch.next_states, train=True)

        # TD target, no bootstrap past a termination (a truncated step bootstraps from the state it reached)
        next_values = jax.lax.stop_gradient(self._next_values(learner, next_states))
        target_values = td_targets(batch.rewards, batch.terminated, next_values, cfg["discount_factor"])

        loss, grads = jax.value_and_grad(self._loss)(learner.q_network, states, batch.actions, target_values)
        optimizer, q_network = learner.optimizer.update(grads, learner.q_network, learner.learning_rate)
        # the target moves only on target-update timesteps: a traced flag, one compilation for both cases
        target_q_network = jax.lax.cond(
            update_target,
            lambda: polyak_update(learner.target_q_network, q_network, cfg["polyak"]),
            lambda: learner.target_q_network,
        )
        rates = self._scheduled_rates(learner, ("learning_rate",), timestep)

        finite = jnp.stack(
            [
                all_finite(states),
                all_finite(next_states),
                all_finite(batch.rewards),
                all_finite(target_values),
                jnp.isfinite(loss),
                all_finite(q_network),
            ]
        )
        learner = LearnerState(
            q_network=q_network,
            target_q_network=target_q_network,
            optimizer=optimizer,
            state_preprocessor=statistics,
            **rates,
        )
        return learner, StepRecord(loss, target_values, finite)

    def _learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array) -> Tuple[LearnerState, UpdateReport]:
        """The whole update as one pure function: a scan of :meth:`_gradient_step` over the stacked batches (the
        target moves when ``timestep`` is due, by the rule of ``target_update_interval``)."""
        update_target = neutral.target_update_due(timestep, self.cfg["target_update_interval"])
        learner, records = jax.lax.scan(
            lambda learner, batch: self._gradient_step(learner, batch, update_target, timestep), learner, batches
        )
        targets = records.target_values
        report = UpdateReport(
            records.loss.mean(), targets.max(), targets.min(), targets.mean(), learner.learning_rate, records.finite
        )
        return learner, report

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        batches = Transition(*sample_batches(self.memory, TRANSITION_NAMES, cfg["batch_size"], cfg["gradient_steps"]))
        learn_deferred(self, timestep, batches)

    def _handle_report(self, timestep: int, packed: np.ndarray) -> None:
        track_gradient_steps(self, timestep, packed)

    def tracked_values(self, report: UpdateReport, learning_rates: bool = False) -> dict:
        """What an update tracks, under its TensorBoard tags, one value per update: tracked by ``_update`` here, and
        written per step by ``CompiledTrainer``. The learning rate is tracked with a schedule, or with
        ``learning_rates`` (a compiled run that sweeps it: each run's own rate)."""
        tracked = {
            "Loss / Q-network loss": report.loss,
            "Target / Target (max)": report.target_max,
            "Target / Target (min)": report.target_min,
            "Target / Target (mean)": report.target_mean,
        }
        if self._learning_rate_schedule is not None or learning_rates:
            tracked["Learning / Learning rate"] = report.learning_rate
        return tracked

    # -- the compiled form (the protocol of jax/agents/base.py): ``act``'s ``_act`` and the update, on batches drawn
    # from the replay kept as arrays in the run's state

    compiled_fixed_keys = REPLAY_FIXED_KEYS + (
        "update_interval",
        "target_update_interval",
    )

    def compiled_obstacles(self) -> list:
        """The configured options that cannot run inside one compiled function, each with its fix."""
        return compiled_replay_obstacles(self)

    def compiled_act(
        self, learner: LearnerState, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act`` inside a compiled run: :meth:`_act` at the decayed epsilon (traced), greedy without exploration."""
        exploration = self.cfg["exploration"]
        epsilon = off_policy_epsilon(timestep, exploration, jnp.exp) if exploration["timesteps"] else 0.0
        actions, _, _, key = self._act(learner.q_network, learner.state_preprocessor, states, key, epsilon)
        return learner, key, actions

    def compiled_learn(self, learner: LearnerState, batches: Batch, timestep: jax.Array, key: jax.Array) -> tuple:
        """``_update``'s compiled call (``key`` is not used)."""
        return self._learn(learner, batches, timestep)

    def check_update(self, timestep: int, learner: LearnerState, report: UpdateReport) -> None:
        """Raise naming the first non-finite quantity, gradient step by step. With writing off nothing has been committed
        then; with writing on the report is read at the next write or checkpoint step and ``learner`` is the agent's
        state then."""
        finite = np.asarray(report.finite)
        if finite.all():
            return
        note = non_finite_note(
            [
                f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the q_network model"
                for path, leaf in jax.tree_util.tree_leaves_with_path(learner.q_network)
                if not np.isfinite(np.asarray(leaf)).all()
            ]
        )
        names = gradient_step_flag_names(finite.shape[0], neutral.STEP_QUANTITIES, note)
        check_named_flags(type(self).__name__, timestep, names, finite.reshape(-1).tolist())
