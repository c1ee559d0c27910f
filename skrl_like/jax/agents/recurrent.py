"""The recurrent (``_RNN``) agents' shared half, JAX backend: the hidden states' array operations and the on-policy
agent that carries, stores and trains with them (the logic is in :mod:`skrl_like.core.agents.recurrent`).

The twin of ``skrl_like.torch.agents.recurrent``. :class:`RecurrentOnPolicyAgent` is listed before the algorithm,
``class PPO_RNN(RecurrentOnPolicyAgent, PPO)``, and overrides only the on-policy hooks; the compiled update runs
unchanged on a :class:`RecurrentRolloutBatch` (the rows in environment-major order, with their stored hidden states
and episode ends), and acting is one jitted call that also returns the new hidden states.
"""

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core.agents.recurrent import (
    HiddenStatesCore,
    carried_environments,
    hidden_state_names,
    recurrent_roles,
    replay_environments,
    replay_holds_sequences,
    replay_recurrent_roles,
)
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.off_policy import sample_batches
from skrl_like.jax.agents.on_policy import UNUSED_KEY, OnPolicyAgent, Rollout, RolloutBatch

#: the rollout extra holding the value model's carried hidden states at the update (its last values start there)
_CARRIED = "carried_"


class HiddenStates(HiddenStatesCore):
    __doc__ = HiddenStatesCore.__doc__

    dtype = jnp.float32

    def _zeros(self, shape: Tuple[int, ...]) -> jax.Array:
        return jnp.zeros(shape, dtype=jnp.float32)

    def _keep_where_running(self, state: jax.Array, ended: Any) -> jax.Array:
        return jnp.where(jnp.reshape(jnp.asarray(ended, dtype=bool), (1, -1, 1)), 0.0, state)

    def _rows_first(self, state: jax.Array) -> jax.Array:
        return jnp.swapaxes(state, 0, 1)

    def _from_numpy(self, array: np.ndarray) -> jax.Array:
        return jnp.asarray(array, dtype=jnp.float32)

    def _to_numpy(self, state: jax.Array) -> np.ndarray:
        return np.asarray(jax.device_get(state), dtype=np.float32)


#: :class:`~skrl_like.jax.agents.on_policy.RolloutBatch`'s rows in environment-major order (row ``env * rollouts + t``),
#: with what the recurrent models read in the update: ``hidden_states`` (per recurrent owner role, the stored states,
#: rows first ``(rows, num_layers, hidden)``) and ``ended`` (``(rows, 1)``: terminated or truncated)
RecurrentRolloutBatch = NamedTuple(
    "RecurrentRolloutBatch", [*RolloutBatch.__annotations__.items(), ("hidden_states", dict), ("ended", jax.Array)]
)


class RecurrentActingState(NamedTuple):
    """A compiled run's acting state for a recurrent on-policy agent (its scan carry): the acting stream and, by owner
    role, the hidden states the next step starts from (``HiddenStates.current``) and those its ``act`` returned
    (``after_step``, until the step's end zeroes them where an episode ended)."""

    key: jax.Array
    hidden: Dict[str, list]
    after_step: Dict[str, list]


def environment_major(array: jax.Array) -> jax.Array:
    """``(rollouts, num_envs, ...)`` -> ``(num_envs * rollouts, ...)``: each environment's steps in order."""
    return jnp.reshape(jnp.swapaxes(array, 0, 1), (array.shape[0] * array.shape[1], *array.shape[2:]))


def as_hidden_states(rows: jax.Array) -> jax.Array:
    """Stored rows ``(rows, num_layers, hidden)`` as a model reads them, ``(num_layers, rows, hidden)``."""
    return jnp.swapaxes(rows, 0, 1)


class RecurrentOnPolicyAgent(OnPolicyAgent):
    """The on-policy half of PPO_RNN, A2C_RNN, RPO_RNN and TRPO_RNN (see the module docstring)."""

    takes_recurrent_models = True

    def _setup_on_policy(self, *args: Any, **kwargs: Any) -> None:
        super()._setup_on_policy(*args, **kwargs)
        self._recurrent = recurrent_roles(type(self).__name__, self.models, ("policy", "value"))
        self.sequence_length = self._recurrent.sequence_length
        self.hidden_states: Optional[HiddenStates] = None

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """The on-policy memory, then the hidden states (zeros), their memory tensors and the jitted act."""
        super().init(trainer_cfg)
        num_envs = carried_environments(type(self).__name__, self._recurrent, self.memory, self.cfg)
        self.hidden_states = HiddenStates(self._recurrent, num_envs)
        stored = self.hidden_states.memory_tensors()
        if self.memory is not None:
            for name, shape in stored.items():
                self.memory.create_tensor(name=name, size=shape, dtype=jnp.float32, keep_dimensions=True)
        self._rollout_extras = tuple(stored)
        self._recurrent_act_fn = jax.jit(self._recurrent_step)

    # -- acting -------------------------------------------------------------------------------------------------

    def _recurrent_step(
        self,
        policy_params: Any,
        value_params: Any,
        state_statistics: Any,
        states: jax.Array,
        hidden: Dict[str, list],
        key: jax.Array,
        taken_actions: Any = None,
    ) -> Tuple[Any, ...]:
        """One jitted step: ``(actions, log_prob, outputs, next key, new hidden states by owner role)``; with
        ``taken_actions``, their log-probability (the random warm-up)."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        inputs = self._model_inputs(processed, subkey)

        def carried(role: str) -> dict:
            return {"rnn": hidden[self._recurrent.owners[role]]} if role in self._recurrent.owners else {}

        taken = {} if taken_actions is None else {"taken_actions": taken_actions}
        actions, log_prob, outputs = self.policy.act(
            {**inputs, **carried("policy"), **taken}, role="policy", params=policy_params
        )
        new_hidden = {}
        if self.hidden_states.owns("policy"):
            new_hidden["policy"] = outputs["rnn"]
        if self.hidden_states.owns("value"):
            _, _, value_outputs = self.value.act({**inputs, **carried("value")}, role="value", params=value_params)
            new_hidden["value"] = value_outputs["rnn"]
        return actions, log_prob, outputs, key, new_hidden

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """Sample actions with the carried hidden states (kept for :meth:`record_transition`), stepping a recurrent
        value model of its own too."""
        algorithm = type(self).__name__
        hidden = self.hidden_states
        hidden.check_batch(states.shape[0], algorithm)
        taken_actions = None
        if self.schedule.acts_randomly(timestep):
            taken_actions, _, _ = self.policy.random_act({"states": states}, role="policy")
        actions, log_prob, outputs, self._key, new_hidden = self._recurrent_act_fn(
            self.policy.state_dict.params,
            self.value.state_dict.params,
            self._state_functional.state,
            states,
            hidden.current,
            self._key,
            taken_actions,
        )
        for role, states_after in new_hidden.items():
            hidden.set_after_step(role, states_after, algorithm)
        if taken_actions is not None:
            actions = taken_actions
        if not self._jax:
            actions, log_prob = jax.device_get((actions, log_prob))
        return actions, log_prob, outputs

    def transition_to_store(self, *args: Any, **kwargs: Any) -> Any:
        """The base's transition with the hidden states the step started from (``rnn_<role>_<i>``)."""
        return super().transition_to_store(*args, **kwargs).with_extras(**self.hidden_states.stored())

    def _advance_carried_state(self, terminated: Any, truncated: Any) -> None:
        """Carry the new hidden states, zeroed where an episode ended."""
        self.hidden_states.end_step(np.logical_or(np.asarray(terminated), np.asarray(truncated)))

    # -- the models' inputs in the update (pure, inside the compiled update) -------------------------------------

    def _gathered_rollout(self) -> Rollout:
        """The memory's rollout with the value model's carried hidden states (where its last values start)."""
        rollout = super()._gathered_rollout()
        if "value" not in self._recurrent.owners:
            return rollout
        carried = self.hidden_states.inputs("value")
        return rollout.with_extras(**{f"{_CARRIED}{index}": state for index, state in enumerate(carried)})

    def _stored_rows(self, role: str, rollout: Rollout, order: Any = None) -> list:
        owner = self._recurrent.owners[role]
        names = hidden_state_names(owner, len(self.hidden_states.shapes[owner]))
        stored = [rollout.extras[name] for name in names]
        if order is not None:
            return [order(state) for state in stored]
        return [jnp.reshape(state, (-1, *state.shape[2:])) for state in stored]

    def _rollout_policy_inputs(self, learner: Any, rollout: Rollout, processed: jax.Array, key: Any) -> dict:
        """One step per row from its stored state: the numbers acting computed."""
        inputs = super()._rollout_policy_inputs(learner, rollout, processed, key)
        if "policy" not in self._recurrent.owners:
            return inputs
        return {**inputs, "rnn": [as_hidden_states(rows) for rows in self._stored_rows("policy", rollout)]}

    def _rollout_value_inputs(self, learner: Any, rollout: Rollout, processed: jax.Array, key: Any) -> dict:
        """The rollout's rows from their stored states, then the last next states from the carried states."""
        inputs = super()._rollout_value_inputs(learner, rollout, processed, key)
        if "value" not in self._recurrent.owners:
            return inputs
        stored = self._stored_rows("value", rollout)
        carried = [rollout.extras[f"{_CARRIED}{index}"] for index in range(len(stored))]
        return {
            **inputs,
            "rnn": [jnp.concatenate([as_hidden_states(s), c], axis=1) for s, c in zip(stored, carried)],
        }

    def _rollout_batch(self, learner: Any, rollout: Rollout) -> Tuple[Any, RecurrentRolloutBatch, jax.Array]:
        """The on-policy rollout batch in environment-major row order (mini-batches of whole sequences), with each
        row's stored hidden states and episode end."""
        learner, batch, rollout_finite = super()._rollout_batch(learner, rollout)
        rollouts, num_envs = rollout.states.shape[:2]
        # (privileged_states is None: the recurrent agents refuse a privileged value model)
        fields = [
            None if field is None else environment_major(jnp.reshape(field, (rollouts, num_envs, -1)))
            for field in batch
        ]
        hidden_states = {
            owner: self._stored_rows(owner, rollout, environment_major) for owner in self.hidden_states.shapes
        }
        ended = environment_major(jnp.logical_or(rollout.terminated, rollout.truncated))
        return learner, RecurrentRolloutBatch(*fields, hidden_states=hidden_states, ended=ended), rollout_finite

    def _sequence_inputs(self, role: str, inputs: dict, batch: RecurrentRolloutBatch) -> dict:
        if role not in self._recurrent.owners:
            return inputs
        states = batch.hidden_states[self._recurrent.owners[role]]
        return {**inputs, "rnn": [as_hidden_states(rows) for rows in states], "terminated": batch.ended}

    def _update_inputs(self, batch: Any, key: Any = UNUSED_KEY) -> dict:
        return self._sequence_inputs("policy", super()._update_inputs(batch, key), batch)

    def _value_inputs(self, inputs: dict, batch: Any, key: Any) -> dict:
        inputs = {name: value for name, value in inputs.items() if name not in ("rnn", "terminated")}
        return self._sequence_inputs("value", super()._value_inputs(inputs, batch, key), batch)

    # -- the compiled form (CompiledTrainer): the hidden states travel in the run's acting state --------------------

    def _compiled_extras(self) -> Tuple[str, ...]:
        return tuple(self.hidden_states.memory_tensors()) if self.hidden_states is not None else ()

    def compiled_start(self) -> Tuple[Any, RecurrentActingState]:
        """The learner state, and the acting stream with the carried hidden states."""
        learner, key = super().compiled_start()
        current = self.hidden_states.current
        return learner, RecurrentActingState(key, current, current)

    def fresh_acting(self, acting: RecurrentActingState, key: jax.Array) -> RecurrentActingState:
        """A seeded run's environments start new episodes: zero hidden states."""
        zeros = jax.tree_util.tree_map(jnp.zeros_like, acting.hidden)
        return RecurrentActingState(key, zeros, zeros)

    def compiled_act(
        self, learner: Any, acting: RecurrentActingState, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> tuple:
        """``act``'s step from the run's hidden states; the new ones wait in ``after_step`` for the step's end."""
        actions, _, _, key, new_hidden = self._recurrent_step(
            learner.policy, learner.value, learner.state_preprocessor, states, acting.hidden, acting.key
        )
        algorithm = type(self).__name__
        checked = {role: self.hidden_states.checked(role, states, algorithm) for role, states in new_hidden.items()}
        return learner, acting._replace(key=key, after_step={**acting.hidden, **checked}), actions

    def compiled_end_step(self, acting: RecurrentActingState, transition: Any) -> tuple:
        """Store the hidden states the step started from, then carry the new ones, zeroed where an episode ended."""
        ended = jnp.logical_or(transition.terminated, transition.truncated)
        hidden = self.hidden_states.reset_where_ended(acting.after_step, ended)
        stored = self.hidden_states.stored(acting.hidden)
        return acting._replace(hidden=hidden, after_step=hidden), transition.with_extras(**stored)

    def compiled_learn(self, learner: Any, rollout: Rollout, timestep: jax.Array, acting: Any) -> tuple:
        """The update on the rollout, the value model's last values from the run's carried hidden states."""
        if "value" in self._recurrent.owners:
            carried = acting.hidden[self._recurrent.owners["value"]]
            rollout = rollout.with_extras(**{f"{_CARRIED}{index}": state for index, state in enumerate(carried)})
        return self._learn(learner, rollout, timestep)

    def compiled_commit(self, learner: Any, acting: RecurrentActingState) -> None:
        """The learner state and acting stream, and the run's hidden states as the carried ones."""
        super().compiled_commit(learner, acting.key)
        self.hidden_states.current = dict(acting.hidden)
        self.hidden_states.after_step = dict(acting.hidden)


class RecurrentOffPolicyAgent(Agent):
    """The replay half of SAC_RNN, TD3_RNN and DDPG_RNN, the twin of the torch one (see its docstring): the policy's
    hidden states are an argument of the jitted act (:meth:`_acting_inputs`), and the update's pure gradient step
    reads each batch's stored states and episode ends (:meth:`_sequence_inputs`)."""

    takes_recurrent_models = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._recurrent = replay_recurrent_roles(type(self).__name__, self.models, self.memory)
        self.sequence_length = self._recurrent.sequence_length
        self.hidden_states: Optional[HiddenStates] = None

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """The replay memory's arrays and the jitted functions, then the hidden states (zeros) and their arrays."""
        super().init(trainer_cfg)
        self.hidden_states = HiddenStates(self._recurrent, replay_environments(self._recurrent, self.memory))
        self.hidden_states.create_memory_tensors(self.memory)

    def compiled_obstacles(self) -> List[str]:
        return [f"{type(self).__name__}: recurrent agents have no compiled form yet; use the SequentialTrainer"]

    # -- acting -------------------------------------------------------------------------------------------------

    def _acting_inputs(self) -> Dict[str, Any]:
        return {"rnn": self.hidden_states.inputs("policy")}

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """The algorithm's actions from the carried hidden states; the policy's new ones are kept for the next step.
        During the random warm-up the policy still reads the observations, so that its memory follows the episode."""
        algorithm = type(self).__name__
        self.hidden_states.check_batch(states.shape[0], algorithm)
        actions, log_prob, outputs = super().act(states, timestep, timesteps)
        stepped = outputs
        if "rnn" not in stepped:  # random actions: no policy step yet
            inputs = {"states": self._state_preprocessor(states), **self._acting_inputs()}
            _, _, stepped = self.policy.act(inputs, role="policy")
        self.hidden_states.set_after_step("policy", stepped.get("rnn"), algorithm)
        return actions, log_prob, outputs

    def transition_to_store(self, *args: Any, **kwargs: Any) -> Any:
        """The base's transition with the hidden states the step started from (``rnn_policy_<i>``)."""
        return super().transition_to_store(*args, **kwargs).with_extras(**self.hidden_states.stored())

    def _advance_carried_state(self, terminated: Any, truncated: Any) -> None:
        """Carry the new hidden states, zeroed where an episode ended."""
        self.hidden_states.end_step(np.logical_or(np.asarray(terminated), np.asarray(truncated)))

    # -- the update -----------------------------------------------------------------------------------------------

    def _update(self, timestep: int, timesteps: int) -> None:
        """The algorithm's update, once the memory holds ``batch_size`` whole sequences."""
        if replay_holds_sequences(self.memory, self.sequence_length, self.cfg["batch_size"]):
            super()._update(timestep, timesteps)

    def _replay_batches(self) -> Transition:
        """``batch_size`` sequences per gradient step (``batch_size * sequence_length`` rows, sequence after
        sequence), with the policy's stored hidden states of every row in ``extras``."""
        stored = hidden_state_names("policy", len(self.hidden_states.shapes["policy"]))
        cfg = self.cfg
        names = (*TRANSITION_NAMES, *stored)
        arrays = sample_batches(self.memory, names, cfg["batch_size"], cfg["gradient_steps"], self.sequence_length)
        return Transition(*arrays[: len(TRANSITION_NAMES)], extras=dict(zip(stored, arrays[len(TRANSITION_NAMES) :])))

    def _sequence_inputs(self, batch: Transition) -> Dict[str, Any]:
        """Every model starts each sequence from the policy's stored state of its first step (a model reads the
        first of each sequence's rows) and resets inside it where an episode ended."""
        stored = hidden_state_names("policy", len(self.hidden_states.shapes["policy"]))
        return {
            "rnn": [as_hidden_states(batch.extras[name]) for name in stored],
            "terminated": jnp.logical_or(batch.terminated, batch.truncated),
        }
