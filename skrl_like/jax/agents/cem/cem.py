"""Cross-Entropy Method (CEM), JAX backend.

Rubinstein, "The Cross-Entropy Method for Combinatorial and Continuous Optimization", 1999. The same algorithm as
the torch backend (same config, same update rule): the host cuts each environment's column of the window (a kept
copy of the previous rollout's rows, then the current rollout's) into episodes and marks the rows of the elite ones
among those ending in the current rollout (:mod:`skrl_like.core.agents.cem`, NumPy); the cross-entropy step is one
jitted pure function of explicit state (a :class:`LearnerState`) over every row of the window, the elite rows picked
by a 0/1 weight (a masked mean instead of a variable-size gather: the shapes never change, so another number of elite
rows never recompiles). Acting is one jitted call per step with explicit random keys.
"""

from typing import Any, Mapping, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents import cem as neutral
from skrl_like.core.agents.cem import CEM_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.off_policy import check_action_space
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import FunctionalPreprocessor, all_finite, make_adam, make_scheduler
from skrl_like.jax.agents.off_policy import create_replay_tensors
from skrl_like.jax.utils.distributed import compile_update

__all__ = ["CEM", "CEM_DEFAULT_CONFIG"]

#: the finite flags of an update, in the order they are checked
UPDATE_QUANTITIES = (
    "the rollout's states (preprocessed)",
    "the policy loss",
    "the parameters after the optimizer step",
)

#: log pi(a|s) of given actions does not depend on the key; the loss passes this one so that it needs none
_UNUSED_KEY = np.zeros(2, np.uint32)


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # the policy's parameters
    optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    learning_rate: jax.Array
    scheduler_steps: jax.Array  # the learning-rate scheduler's steps so far (what LinearLR's factor depends on)


class EliteRows(NamedTuple):
    """Every row of the window (``rollouts * num_envs`` of the previous rollout, then as many of the current one,
    time-major), with its elite weight."""

    previous_states: jax.Array  # (rows, size) as stored
    states: jax.Array  # (rows, size) as stored
    actions: jax.Array  # (2 * rows, 1) int32
    weights: jax.Array  # (2 * rows,) float32: 1 on the rows of elite episodes, 0 elsewhere


class UpdateReport(NamedTuple):
    loss: jax.Array
    finite: jax.Array  # one flag per ``UPDATE_QUANTITIES``


class CEM(Agent):
    """Cross-Entropy Method.

    :param models: ``{"policy": ...}``: a ``CategoricalMixin`` model with parameters (``init_state_dict("policy")``)
        and one output per discrete action.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` (one rollout) and ``num_envs`` equal to the
        environments', or a list of memories (the first one is used for learning).
    :param action_space: the ``gymnasium.spaces.Discrete`` action space of one environment.
    :param cfg: keys of ``CEM_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    learner_type = LearnerState
    default_config = CEM_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        check_action_space("CEM", action_space, "Discrete")

    def _setup(self) -> None:
        cfg = self.cfg
        self._require_models(("policy",))
        self._check_categorical_policy()
        self._check_model_outputs(policy_roles=("policy",))
        neutral.check_memory("CEM", self.memory, cfg["rollouts"])

        self.policy = self.models["policy"]
        self.checkpoint_modules["policy"] = self.policy

        self.schedule = RolloutSchedule(cfg["rollouts"], cfg["learning_starts"])
        self.episodes = neutral.EpisodeWindows("CEM", cfg["rollouts"], cfg["discount_factor"], cfg["percentile"])

        # with a schedule the update passes its own rate to the step (skrl's JAX rule)
        self._learning_rate = cfg["learning_rate"]
        self._scheduler_class = cfg["learning_rate_scheduler"]
        self._learning_rate_schedule = make_scheduler(
            self._scheduler_class, cfg["learning_rate_scheduler_kwargs"], self.learner_type
        )
        self._start_learning_rate_schedule(("learning_rate",))
        self.optimizer = make_adam(self.policy, cfg["learning_rate"], self._learning_rate_schedule)
        self._register_optimizer("optimizer")

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("state_preprocessor"))

    def _check_categorical_policy(self) -> None:
        """The loss is the log-probability of the taken class: the policy must be a categorical one with parameters."""
        policy = self.models["policy"]
        if not hasattr(policy, "state_dict"):
            raise ValueError(
                "CEM: the 'policy' model has no parameters yet: call policy.init_state_dict('policy') before "
                "creating the agent"
            )
        distribution, _ = self._output_size(policy, "policy")
        if distribution != "categorical":
            raise ValueError(
                f"CEM needs a categorical policy (its outputs' 'net_output' are the logits of the discrete actions); "
                f"the 'policy' model ({type(policy).__name__}) is a {distribution} one: build it with CategoricalMixin"
            )

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory's tensors, the writer and the jitted functions (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        create_replay_tensors(self.memory, self.observation_space, self.action_space, jnp.int32)
        # the previous rollout's rows, the window's first half (zeros, of weight 0, before the first rollout)
        self._previous_states = jnp.zeros_like(self.memory.get_tensor_by_name("states"))
        self._previous_actions = jnp.zeros_like(self.memory.get_tensor_by_name("actions"))
        self._key = self._split_run_key()
        self._key = jax.device_put(self._key, self.device)  # committed, as every key acting returns
        self._act_fn = jax.jit(self._sample_with_log_prob)
        self._update_fn = compile_update(self._learn)  # jax.jit, or one SPMD program over the processes
        # the state acting reads, placed as an update leaves it: one compilation of acting before and after updates
        self.commit_learner(self.gather_learner())

    # -- acting -------------------------------------------------------------------------------------------------

    def _sample_with_log_prob(
        self, params: Any, state_statistics: Any, states: jax.Array, key: jax.Array
    ) -> Tuple[Any, ...]:
        """One dispatch per step: ``(actions, log_prob, outputs, next key)``."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        actions, log_prob, outputs = self.policy.act({"states": processed, "key": subkey}, role="policy", params=params)
        return actions, log_prob, outputs, key

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """Sample actions from the policy: ``(actions, log_prob, outputs)`` (before ``random_timesteps``, uniform
        random actions)."""
        if timestep < self.cfg["random_timesteps"]:
            actions, log_prob, outputs = self.policy.random_act({"states": states}, role="policy")
        else:
            actions, log_prob, outputs, self._key = self._act_fn(
                self.policy.state_dict.params, self._state_functional.state, states, self._key
            )
        if not self._jax:
            actions = np.asarray(actions)
        return actions, log_prob, outputs

    def _update_when_due(self, timestep: int, timesteps: int) -> bool:
        """The base's update at the end of every rollout from ``learning_starts`` on; a rollout that ends before it
        only records which episodes run on into the next one."""
        if self.memory is None:
            return False
        updated = super()._update_when_due(timestep, timesteps)
        if not updated and self.training and self.schedule.collected % self.schedule.rollouts == 0:
            self._end_rollout(*self._rewards_and_ends())
        return updated

    def _episode_ends(self) -> Any:
        """``(rollouts, num_envs)`` bools: the memory's ``terminated | truncated``."""
        memory = self.memory
        ends = np.logical_or(memory.get_tensor_by_name("terminated"), memory.get_tensor_by_name("truncated"))
        return ends[..., 0]

    def _rewards_and_ends(self) -> Tuple[np.ndarray, np.ndarray]:
        """The rollout's ``(rollouts, num_envs)`` rewards and episode ends on the host (one transfer)."""
        rewards, dones = jax.device_get((self.memory.get_tensor_by_name("rewards")[..., 0], self._episode_ends()))
        return np.asarray(rewards), np.asarray(dones, dtype=bool)

    def _end_rollout(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Keep the rollout's rows as the next window's first half (a rollout before ``learning_starts`` too)."""
        self._previous_states = jnp.array(self.memory.get_tensor_by_name("states"), copy=True)
        self._previous_actions = jnp.array(self.memory.get_tensor_by_name("actions"), copy=True)
        self.episodes.end_rollout(rewards, dones)

    # -- learning -----------------------------------------------------------------------------------------------

    def _loss(self, params: Any, states: jax.Array, actions: jax.Array, weights: jax.Array) -> jax.Array:
        """The cross-entropy of the elite rows' actions: ``-log pi(a|s)`` averaged over the rows of weight 1 (pure)."""
        _, log_prob, _ = self.policy.act(
            {"states": states, "taken_actions": actions, "key": _UNUSED_KEY}, role="policy", params=params
        )
        return -jnp.sum(weights * log_prob.reshape(-1)) / jnp.sum(weights)

    def _learn(self, learner: LearnerState, rows: EliteRows, timestep: jax.Array) -> Tuple[LearnerState, UpdateReport]:
        """The whole update as one pure function: preprocess (statistics updated with the current rollout's rows,
        the previous ones were seen by the last update), one Adam step on the elite rows' cross-entropy, one
        scheduler step."""
        statistics, current = self._state_functional(learner.state_preprocessor, rows.states, train=True)
        _, previous = self._state_functional(statistics, rows.previous_states)
        states = jnp.concatenate([previous, current])
        loss, grads = jax.value_and_grad(self._loss)(learner.policy, states, rows.actions, rows.weights)
        optimizer, policy = learner.optimizer.update(grads, learner.policy, learner.learning_rate)
        rates = self._scheduled_rates(learner, ("learning_rate",), timestep)
        finite = jnp.stack([all_finite(states), jnp.isfinite(loss), all_finite(policy)])
        learner = LearnerState(policy, optimizer, statistics, **rates)
        return learner, UpdateReport(loss, finite)

    def gather_learner(self) -> LearnerState:
        """Placed on the agent's device: fresh parameters are uncommitted and an update's outputs committed, and the
        compiled update would be specialised for each."""
        return jax.device_put(super().gather_learner(), self.device)

    def _update(self, timestep: int, timesteps: int) -> None:
        memory = self.memory
        states = memory.get_tensor_by_name("states")
        rollouts, num_envs = states.shape[:2]
        rows = rollouts * num_envs

        # the episodes and their elites, on the host: one transfer of the rewards and episode ends
        rewards, dones = self._rewards_and_ends()
        check_named_flags("CEM", timestep, ["the rollout's rewards"], [np.isfinite(rewards).all()])
        selection = self.episodes.select(rewards, dones, timestep)  # keeps this rollout's rewards and ends
        if selection is None:
            self._end_rollout(rewards, dones)
            return

        # the window, time-major: the previous rollout's rows, then the current one's
        actions = jnp.concatenate([self._previous_actions, memory.get_tensor_by_name("actions")])
        elite_rows = EliteRows(
            previous_states=self._previous_states.reshape(rows, -1),
            states=states.reshape(rows, -1),
            actions=actions.reshape(2 * rows, -1),
            weights=selection.weights.reshape(-1),
        )
        learner, report = self._update_fn(self.gather_learner(), elite_rows, np.int32(timestep))
        self.check_update(timestep, learner, report)
        self.commit_learner(learner)
        self._end_rollout(rewards, dones)

        self.track_data("Loss / Policy loss", report.loss)
        self.track_data("Coefficient / Return threshold", selection.threshold)
        self.track_data("Coefficient / Mean discounted returns", float(selection.returns.mean()))
        if self._learning_rate_schedule is not None:
            self.track_data("Learning / Learning rate", learner.learning_rate)

    def check_update(self, timestep: int, learner: LearnerState, report: UpdateReport) -> None:
        """One host transfer: raise naming the first non-finite quantity; nothing is committed then."""
        finite = np.asarray(jax.device_get(report.finite))
        if finite.all():
            return
        note = non_finite_note(
            [
                f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the policy model"
                for path, leaf in jax.tree_util.tree_leaves_with_path(learner.policy)
                if not np.isfinite(np.asarray(leaf)).all()
            ]
        )
        names = list(UPDATE_QUANTITIES[:-1]) + [f"{UPDATE_QUANTITIES[-1]} ({note})"]
        check_named_flags("CEM", timestep, names, finite.tolist())
