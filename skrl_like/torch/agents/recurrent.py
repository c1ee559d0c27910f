"""The recurrent (``_RNN``) agents' shared half, torch backend: the hidden states' tensor operations and the
on-policy and off-policy agents that carry, store and train with them (the logic is in
:mod:`skrl_like.core.agents.recurrent`).

:class:`RecurrentOnPolicyAgent` is listed before the algorithm, ``class PPO_RNN(RecurrentOnPolicyAgent, PPO)``: it
overrides only the on-policy hooks (acting, what is stored, the models' inputs in the rollout evaluation and in the
update, the row order of the update), and the algorithm's update runs unchanged.
"""

from typing import Any, Optional, Sequence, Tuple

import numpy as np
import torch

from skrl_like.core.agents.recurrent import (
    HiddenStatesCore,
    carried_environments,
    hidden_state_names,
    recurrent_roles,
    replay_environments,
    replay_holds_sequences,
    replay_recurrent_roles,
)
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.off_policy import sample_batch
from skrl_like.torch.agents.on_policy import OnPolicyAgent, RolloutBatch


class HiddenStates(HiddenStatesCore):
    __doc__ = HiddenStatesCore.__doc__

    dtype = torch.float32

    def __init__(self, roles: Any, num_envs: int, device: torch.device) -> None:
        self.device = device
        super().__init__(roles, num_envs)

    def _zeros(self, shape: Tuple[int, ...]) -> torch.Tensor:
        return torch.zeros(shape, dtype=torch.float32, device=self.device)

    def _keep_where_running(self, state: torch.Tensor, ended: torch.Tensor) -> torch.Tensor:
        return state * torch.logical_not(ended).reshape(1, -1, 1).to(state.dtype)

    def _rows_first(self, state: torch.Tensor) -> torch.Tensor:
        return state.transpose(0, 1)

    def _from_numpy(self, array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(array, dtype=torch.float32, device=self.device)

    def _to_numpy(self, state: torch.Tensor) -> np.ndarray:
        return state.detach().float().cpu().numpy()


def environment_major(tensor: torch.Tensor) -> torch.Tensor:
    """``(rollouts, num_envs, ...)`` -> ``(num_envs * rollouts, ...)``, row ``env * rollouts + t``: each environment's
    steps in order, so that consecutive rows form its sequences (skrl's ``sample_all(sequence_length=L)`` order)."""
    return tensor.transpose(0, 1).reshape(tensor.shape[0] * tensor.shape[1], *tensor.shape[2:])


def as_hidden_states(rows: torch.Tensor) -> torch.Tensor:
    """Stored rows ``(rows, num_layers, hidden)`` as a model reads them, ``(num_layers, rows, hidden)``."""
    return rows.transpose(0, 1)


class RecurrentOnPolicyAgent(OnPolicyAgent):
    """The on-policy half of PPO_RNN, A2C_RNN, RPO_RNN and TRPO_RNN (see the module docstring)."""

    takes_recurrent_models = True
    keeps_acting_pass = False  # the update evaluates each stored row from its stored hidden states

    def _setup_on_policy(self) -> None:
        super()._setup_on_policy()
        self._recurrent = recurrent_roles(type(self).__name__, self.models, ("policy", "value"))
        self.sequence_length = self._recurrent.sequence_length
        self.hidden_states: Optional[HiddenStates] = None

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """The on-policy memory, then the hidden states (zeros) and their memory tensors."""
        super().init(trainer_cfg)
        num_envs = carried_environments(type(self).__name__, self._recurrent, self.memory, self.cfg)
        self.hidden_states = HiddenStates(self._recurrent, num_envs, self.device)
        if self.memory is not None:
            for name, shape in self.hidden_states.memory_tensors().items():
                self.memory.create_tensor(name=name, size=shape, dtype=torch.float32, keep_dimensions=True)

    # -- acting -------------------------------------------------------------------------------------------------

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy with the carried hidden states (kept for :meth:`record_transition`), and
        step a recurrent value model of its own too, so that its hidden states follow the episode."""
        algorithm = type(self).__name__
        hidden = self.hidden_states
        hidden.check_batch(states.shape[0], algorithm)
        inputs = self._model_inputs(self._state_preprocessor(states))
        with self._autocast():
            policy_inputs = {**inputs, "rnn": hidden.inputs("policy")} if "policy" in hidden.owners else inputs
            if timestep < self.cfg["random_timesteps"]:
                actions, _, _ = self.policy.random_act(policy_inputs, role="policy")
                policy_inputs = {**policy_inputs, "taken_actions": actions}
            actions_taken, log_prob, outputs = self.policy.act(policy_inputs, role="policy")
            actions = policy_inputs.get("taken_actions", actions_taken)
            if hidden.owns("policy"):
                hidden.set_after_step("policy", outputs.get("rnn"), algorithm)
            if hidden.owns("value"):
                _, _, value_outputs = self.value.act({**inputs, "rnn": hidden.inputs("value")}, role="value")
                hidden.set_after_step("value", value_outputs.get("rnn"), algorithm)
        return actions, log_prob, outputs

    def transition_to_store(self, *args: Any, **kwargs: Any) -> Any:
        """The base's transition with the hidden states the step started from (``rnn_<role>_<i>``)."""
        return super().transition_to_store(*args, **kwargs).with_extras(**self.hidden_states.stored())

    def _advance_carried_state(self, terminated: Any, truncated: Any) -> None:
        """Carry the new hidden states, zeroed where an episode ended."""
        self.hidden_states.end_step(torch.logical_or(terminated, truncated))

    # -- the models' inputs in the update ------------------------------------------------------------------------

    def _stored_states(self, role: str, order: Any = None) -> list:
        """The hidden states stored for ``role`` (its owner's tensors), one row per sample: time-major, or
        environment-major with ``order=environment_major``."""
        owner = self._recurrent.owners[role]
        names = hidden_state_names(owner, len(self.hidden_states.shapes[owner]))
        rows = []
        for name in names:
            tensor = self.memory.get_tensor_by_name(name)
            rows.append(order(tensor) if order else tensor.reshape(-1, *tensor.shape[2:]))
        return rows

    def _with_stored_states(self, role: str, inputs: dict, rows: Any = slice(None), order: Any = None) -> dict:
        if role not in self._recurrent.owners:
            return inputs
        return {**inputs, "rnn": [as_hidden_states(state[rows]) for state in self._stored_states(role, order)]}

    def _rollout_policy_inputs(self, processed: torch.Tensor) -> dict:
        """One step per row from its stored state: the numbers acting computed."""
        return self._with_stored_states("policy", super()._rollout_policy_inputs(processed))

    def _rollout_value_inputs(self, processed: torch.Tensor) -> dict:
        """The rollout's rows from their stored states, then the last next states from the carried states."""
        inputs = super()._rollout_value_inputs(processed)
        if "value" not in self._recurrent.owners:
            return inputs
        carried = self.hidden_states.inputs("value")
        stored = self._stored_states("value")
        return {**inputs, "rnn": [torch.cat([as_hidden_states(s), c], dim=1) for s, c in zip(stored, carried)]}

    def _rollout_batch(self, timestep: int) -> RolloutBatch:
        """The on-policy rollout batch in environment-major row order: mini-batches of whole sequences."""
        batch = super()._rollout_batch(timestep)
        rollouts, num_envs = self.memory.get_tensor_by_name("states").shape[:2]
        return RolloutBatch(*(environment_major(field.reshape(rollouts, num_envs, -1)) for field in batch))

    def _sequence_inputs(self, role: str, inputs: dict, batch: Any) -> dict:
        """``inputs`` with the stored states of the rows ``batch`` (environment-major) and their episode ends."""
        if role not in self._recurrent.owners:
            return inputs
        ended = torch.logical_or(
            self.memory.get_tensor_by_name("terminated"), self.memory.get_tensor_by_name("truncated")
        )
        inputs = self._with_stored_states(role, inputs, batch, environment_major)
        return {**inputs, "terminated": environment_major(ended)[batch]}

    def _update_inputs(self, processed: torch.Tensor, batch: Any) -> dict:
        return self._sequence_inputs("policy", super()._update_inputs(processed, batch), batch)

    def _value_inputs(self, inputs: dict, batch: Any, epoch: int) -> dict:
        inputs = {key: value for key, value in inputs.items() if key not in ("rnn", "terminated")}
        return self._sequence_inputs("value", super()._value_inputs(inputs, batch, epoch), batch)


class RecurrentOffPolicyAgent(Agent):
    """The replay half of SAC_RNN, TD3_RNN and DDPG_RNN (see the module docstring and
    :func:`~skrl_like.core.agents.recurrent.replay_recurrent_roles`).

    The policy's hidden states are carried per environment, stored with each step (the state the step started
    from) and zeroed where an episode ended. An update draws ``batch_size`` sequences of ``sequence_length``
    consecutive steps of one environment (skrl's ``memory.sample(..., sequence_length=L)``), and every recurrent
    model starts each of them from the policy's stored state of its first step, resetting inside it where an
    episode ended; the next states' pass starts from the same state, as in skrl. The update waits until the
    memory holds ``batch_size`` sequences.
    """

    takes_recurrent_models = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._recurrent = replay_recurrent_roles(type(self).__name__, self.models, self.memory)
        self.sequence_length = self._recurrent.sequence_length
        self.hidden_states: Optional[HiddenStates] = None

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """The replay memory's tensors, then the hidden states (zeros) and their memory tensors."""
        super().init(trainer_cfg)
        num_envs = replay_environments(self._recurrent, self.memory)
        self.hidden_states = HiddenStates(self._recurrent, num_envs, self.device)
        self.hidden_states.create_memory_tensors(self.memory)

    # -- acting -------------------------------------------------------------------------------------------------

    def _acting_inputs(self, states: torch.Tensor) -> dict:
        return {**super()._acting_inputs(states), "rnn": self.hidden_states.inputs("policy")}

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, Any, dict]:
        """The algorithm's actions from the carried hidden states; the policy's new ones are kept for the next step.
        During the random warm-up the policy still reads the observations, so that its memory follows the episode."""
        algorithm = type(self).__name__
        self.hidden_states.check_batch(states.shape[0], algorithm)
        actions, log_prob, outputs = super().act(states, timestep, timesteps)
        stepped = outputs
        if "rnn" not in stepped:  # random actions: no policy step yet
            with torch.no_grad(), self._autocast():
                _, _, stepped = self.policy.act(self._acting_inputs(states), role="policy")
        self.hidden_states.set_after_step("policy", stepped.get("rnn"), algorithm)
        return actions, log_prob, outputs

    def transition_to_store(self, *args: Any, **kwargs: Any) -> Any:
        """The base's transition with the hidden states the step started from (``rnn_policy_<i>``)."""
        return super().transition_to_store(*args, **kwargs).with_extras(**self.hidden_states.stored())

    def _advance_carried_state(self, terminated: Any, truncated: Any) -> None:
        """Carry the new hidden states, zeroed where an episode ended."""
        self.hidden_states.end_step(torch.logical_or(terminated, truncated))

    # -- the update -----------------------------------------------------------------------------------------------

    def _update(self, timestep: int, timesteps: int) -> None:
        """The algorithm's update, once the memory holds ``batch_size`` whole sequences."""
        if replay_holds_sequences(self.memory, self.sequence_length, self.cfg["batch_size"]):
            super()._update(timestep, timesteps)

    def _replay_batch(self, names: Sequence[str]) -> Tuple[list, dict]:
        """``batch_size`` sequences (``batch_size * sequence_length`` rows, sequence after sequence), with the
        policy's stored hidden states of every row (a model reads each sequence's first) and the episode ends."""
        stored = hidden_state_names("policy", len(self.hidden_states.shapes["policy"]))
        tensors = sample_batch(self.memory, (*names, *stored), self.cfg["batch_size"], self.sequence_length)
        batch = dict(zip((*names, *stored), tensors))
        sequence = {
            "rnn": [as_hidden_states(batch[name]) for name in stored],
            "terminated": torch.logical_or(batch["terminated"], batch["truncated"]),
        }
        return tensors[: len(names)], sequence
