"""What every recurrent (``_RNN``) agent of both backends shares, written once: reading the models' recurrent
specification, the checks of models, sequences and memory, and the bookkeeping of the hidden states an agent
carries per environment.

skrl's conventions (see ``docs/recurrent.md``): a recurrent model's ``get_specification()`` returns
``{"rnn": {"sequence_length": L, "sizes": [(num_layers, num_envs, hidden_size), ...]}}``; acting passes the hidden
states in ``inputs["rnn"]`` and takes the new ones from ``outputs["rnn"]``. The agent

- keeps one set of hidden states per recurrent model (a model filling two roles has one set), zeros at the start;
- at each step stores the hidden states the step *started* from (memory tensors ``rnn_<role>_<i>``, one row per
  environment, ``(num_layers, hidden_size)`` each), then zeroes the new ones where the episode ended (terminated or
  truncated) and carries them to the next step, also across rollouts;
- trains on the rollout cut into sequences of ``L`` steps of one environment (environment-major rows, as skrl's
  ``sample_all(sequence_length=L)``), each starting from its stored state, with ``inputs["terminated"]`` (terminated
  or truncated) telling the model where to reset inside a sequence.

Backend classes supply only the tensor operations (:class:`HiddenStatesCore`'s hooks).
"""

import contextlib
import copy
from typing import Any, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np


class RecurrentSpecification(NamedTuple):
    """A recurrent model's ``get_specification()["rnn"]``."""

    sequence_length: int
    sizes: Tuple[Tuple[int, int, int], ...]  # (num_layers, num_envs, hidden_size) per hidden-state tensor


def recurrent_specification(model: Any, role: str, algorithm: str) -> Optional[RecurrentSpecification]:
    """The model's recurrent specification, checked, or ``None`` for a feedforward model."""
    get = getattr(model, "get_specification", None)
    rnn = (get() if callable(get) else {}).get("rnn") if model is not None else None
    if not rnn:
        return None
    where = f"{algorithm}: the '{role}' model's get_specification()['rnn']"
    sequence_length = rnn.get("sequence_length", 1)
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, int) or sequence_length < 1:
        raise ValueError(f"{where}['sequence_length'] must be an int >= 1, got {sequence_length!r}")
    sizes = rnn.get("sizes")
    if not sizes or any(len(size) != 3 or any(int(n) < 1 for n in size) for size in sizes):
        raise ValueError(
            f"{where}['sizes'] must list the hidden-state shapes (num_layers, num_envs, hidden_size), one for a GRU "
            f"or RNN, two for an LSTM; got {sizes!r}"
        )
    return RecurrentSpecification(sequence_length, tuple(tuple(int(n) for n in size) for size in sizes))


def zero_state_shapes(model: Any, rows: int) -> List[Tuple[int, int, int]]:
    """The shapes of zero hidden states for one acting call of ``model`` on ``rows`` observations (none for a
    feedforward model): what the construction checks run a recurrent model with."""
    get = getattr(model, "get_specification", None)
    rnn = (get() if callable(get) else {}).get("rnn") or {}
    return [(int(size[0]), rows, int(size[2])) for size in rnn.get("sizes", [])]


def hidden_state_names(role: str, count: int) -> List[str]:
    """The memory tensors of a role's stored hidden states (skrl's names)."""
    return [f"rnn_{role}_{index}" for index in range(count)]


def check_model_kinds(algorithm: str, models: Mapping[str, Any], takes_recurrent_models: bool) -> None:
    """A feedforward agent refuses recurrent models (naming the ``_RNN`` agent), and an ``_RNN`` agent needs one."""
    recurrent = [role for role, model in models.items() if recurrent_specification(model, role, algorithm) is not None]
    if recurrent and not takes_recurrent_models:
        raise ValueError(
            f"{algorithm}: the {recurrent} model(s) are recurrent (get_specification() has an 'rnn' entry), but "
            f"{algorithm} is a feedforward agent that passes no hidden states: use {algorithm}_RNN (same config), "
            "or give feedforward models"
        )
    if takes_recurrent_models and not recurrent and models:
        feedforward = algorithm[: -len("_RNN")] if algorithm.endswith("_RNN") else "the feedforward agent"
        raise ValueError(
            f"{algorithm}: none of the models {sorted(models)} is recurrent (no get_specification()['rnn']): give a "
            f"model with a GRU, LSTM or RNN layer, or use {feedforward} for feedforward models"
        )


class RecurrentRoles(NamedTuple):
    """Which of an agent's roles are recurrent, whose hidden states each reads, and the sequences' length."""

    specifications: Dict[str, RecurrentSpecification]
    owners: Dict[str, str]  # per recurrent role: itself, or the first role filled by the same model
    sequence_length: int


def recurrent_model_roles(algorithm: str, models: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """The roles (``uid.role`` for several agents) whose model is recurrent, of ``{uid: {role: model}}``."""
    return [
        role if len(models) == 1 else f"{uid}.{role}"
        for uid, roles in models.items()
        for role, model in roles.items()
        if recurrent_specification(model, role, algorithm) is not None
    ]


def recurrent_roles(algorithm: str, models: Mapping[str, Any], roles: Sequence[str]) -> RecurrentRoles:
    """The recurrent roles among ``roles`` (at least one: :func:`check_model_kinds` ran). All recurrent models train
    on sequences of one length."""
    specifications, owners = {}, {}
    for role in roles:
        specification = recurrent_specification(models.get(role), role, algorithm)
        if specification is None:
            continue
        specifications[role] = specification
        owners[role] = next(other for other in specifications if models.get(other) is models.get(role))
    lengths = {role: specification.sequence_length for role, specification in specifications.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"{algorithm}: the recurrent models train on sequences of different lengths {lengths}: the agent cuts the "
            "rollout into sequences of one length; give them the same sequence_length"
        )
    return RecurrentRoles(specifications, owners, next(iter(lengths.values())))


def carried_environments(algorithm: str, roles: RecurrentRoles, memory: Any, cfg: Mapping[str, Any]) -> int:
    """How many environments the hidden states are carried for: the memory's (checked to hold whole sequences),
    else the specification's ``num_envs``."""
    if memory is None:
        return next(iter(roles.specifications.values())).sizes[0][1]
    check_sequences(
        algorithm,
        roles.sequence_length,
        cfg["rollouts"],
        memory.num_envs,
        cfg.get("mini_batches", 1),
        memory.memory_size,
    )
    return memory.num_envs


def check_sequences(
    algorithm: str, sequence_length: int, rollouts: int, num_envs: int, mini_batches: int, memory_size: int
) -> None:
    """The rollout is cut into whole sequences of ``sequence_length`` steps of one environment, and every
    mini-batch holds whole sequences."""
    check_memory_holds_sequence(algorithm, sequence_length, memory_size)
    if rollouts % sequence_length:
        raise ValueError(
            f"{algorithm}: cfg['rollouts'] = {rollouts} is not a multiple of the models' sequence_length "
            f"{sequence_length}: each environment's rollout is cut into sequences of {sequence_length} steps; use "
            f"rollouts = {rollouts + sequence_length - rollouts % sequence_length} (or another multiple), or change "
            "the sequence_length"
        )
    sequences = rollouts // sequence_length * num_envs
    if sequences % mini_batches:
        raise ValueError(
            f"{algorithm}: cfg['mini_batches'] = {mini_batches} does not split the {sequences} sequences of an update "
            f"(rollouts / sequence_length x num_envs) into whole sequences: use a mini_batches that divides "
            f"{sequences}"
        )


def check_memory_holds_sequence(algorithm: str, sequence_length: int, memory_size: int) -> None:
    """A memory of ``memory_size`` steps per environment holds at least one sequence of ``sequence_length`` steps."""
    if memory_size < sequence_length:
        raise ValueError(
            f"{algorithm}: the memory holds {memory_size} steps per environment, fewer than one sequence of "
            f"{sequence_length} steps (the models' sequence_length): use a memory (and cfg['rollouts']) of at least "
            f"{sequence_length} steps, or a shorter sequence_length"
        )


def replay_recurrent_roles(algorithm: str, models: Mapping[str, Any], memory: Any) -> RecurrentRoles:
    """The recurrent roles of an off-policy ``_RNN`` agent (SAC_RNN, TD3_RNN, DDPG_RNN), checked with its replay
    ``memory`` (``None``: an agent that only acts), which must hold at least one sequence.

    Only the policy runs while acting, so only the policy carries and stores hidden states; in the update every
    recurrent model (the policy, the critics, the targets) starts each sampled sequence from the policy's stored
    state, as in skrl 1.4.3 (its critics never see the environment step by step). So the policy is recurrent and
    every recurrent model has the policy's hidden-state sizes."""
    recurrent = recurrent_roles(algorithm, models, tuple(models))
    policy = recurrent.specifications.get("policy")
    if policy is None:
        raise ValueError(
            f"{algorithm}: the {sorted(recurrent.specifications)} model(s) are recurrent but the policy is not: only "
            "the policy runs while acting, so its stored hidden states are the ones every recurrent model starts a "
            "sampled sequence from; give the policy a recurrent layer too, or use feedforward models with the "
            "feedforward agent"
        )
    layout = [(size[0], size[2]) for size in policy.sizes]
    for role, specification in recurrent.specifications.items():
        sizes = [(size[0], size[2]) for size in specification.sizes]
        if sizes != layout:
            raise ValueError(
                f"{algorithm}: the '{role}' model's hidden states (num_layers, hidden_size) {sizes} differ from the "
                f"policy's {layout}: every recurrent model of an off-policy agent starts its sampled sequences from "
                "the policy's stored hidden states (as skrl does); give it the policy's recurrent sizes"
            )
    if memory is not None:
        check_memory_holds_sequence(algorithm, policy.sequence_length, memory.memory_size)
    return RecurrentRoles(
        recurrent.specifications, dict.fromkeys(recurrent.specifications, "policy"), policy.sequence_length
    )


def replay_environments(roles: RecurrentRoles, memory: Any) -> int:
    """How many environments an off-policy ``_RNN`` agent carries hidden states for: its memory's, else the
    policy's specification's ``num_envs``."""
    return memory.num_envs if memory is not None else roles.specifications["policy"].sizes[0][1]


def replay_holds_sequences(memory: Any, sequence_length: int, batch_size: int) -> bool:
    """Whether the replay memory holds ``batch_size`` distinct starts of a sequence of ``sequence_length`` steps: an
    off-policy ``_RNN`` agent's update waits until it does (every batch is then ``batch_size`` whole sequences, a
    static shape, drawn with or without replacement)."""
    return len(memory) - memory.num_envs * (sequence_length - 1) >= batch_size


class HiddenStatesCore:
    """The hidden states an agent carries per environment, for each recurrent model (run state: a checkpoint taken
    mid-episode resumes with them).

    ``current[owner]`` is the list of tensors the next step starts from, ``(num_layers, num_envs, hidden_size)``
    each; ``after_step[owner]`` the ones the last ``act`` returned, until :meth:`end_step` resets them where an
    episode ended and makes them current.

    :param roles: the recurrent roles (:func:`recurrent_roles`).
    :param num_envs: the environments the agent acts in (:func:`carried_environments`).
    """

    def __init__(self, roles: RecurrentRoles, num_envs: int) -> None:
        self.roles = roles
        self.owners = dict(roles.owners)
        self.num_envs = int(num_envs)
        self.shapes = {
            role: [(size[0], self.num_envs, size[2]) for size in specification.sizes]
            for role, specification in roles.specifications.items()
            if self.owners[role] == role
        }
        self.current = {role: [self._zeros(shape) for shape in shapes] for role, shapes in self.shapes.items()}
        self.after_step = dict(self.current)

    # -- backend hooks ----------------------------------------------------------------------------------------

    def _zeros(self, shape: Tuple[int, ...]) -> Any:
        raise NotImplementedError

    def _keep_where_running(self, state: Any, ended: Any) -> Any:
        """``state`` ``(num_layers, num_envs, hidden)`` with the environments where ``ended`` ``(num_envs, 1)``
        is true set to zero."""
        raise NotImplementedError

    def _rows_first(self, state: Any) -> Any:
        """``(num_layers, num_envs, hidden)`` -> ``(num_envs, num_layers, hidden)`` (one memory row per env)."""
        raise NotImplementedError

    def _from_numpy(self, array: np.ndarray) -> Any:
        """A float32 NumPy array as the backend's tensor, where the agent computes."""
        raise NotImplementedError

    def _to_numpy(self, state: Any) -> np.ndarray:
        raise NotImplementedError

    def resized(self, num_envs: int) -> "HiddenStatesCore":
        """Zero hidden states of the same models for ``num_envs`` environments (this set untouched)."""
        other = copy.copy(self)  # keeps what a backend set (torch: the device)
        HiddenStatesCore.__init__(other, self.roles, num_envs)
        return other

    # -- the step ---------------------------------------------------------------------------------------------

    def owns(self, role: str) -> bool:
        """Whether ``role`` carries hidden states of its own (a recurrent model not shared with an earlier role)."""
        return self.owners.get(role) == role

    def inputs(self, role: str) -> List[Any]:
        """The hidden states the current step of ``role`` starts from (``inputs["rnn"]``)."""
        return self.current[self.owners[role]]

    def check_batch(self, rows: int, algorithm: str) -> None:
        if rows != self.num_envs:
            raise ValueError(
                f"{algorithm}: it acts on {rows} observations but carries hidden states for {self.num_envs} "
                "environments (the memory's num_envs): act on every environment at once, with a memory of as many "
                "environments"
            )

    def set_after_step(self, role: str, states: Sequence[Any], algorithm: str) -> None:
        """Keep ``outputs["rnn"]`` of the model of ``role`` for the next step."""
        self.after_step[role] = self.checked(role, states, algorithm)

    def checked(self, role: str, states: Sequence[Any], algorithm: str) -> List[Any]:
        """``outputs["rnn"]`` of the model of ``role`` as a list, its shapes checked against the specification's (a
        compiled run checks the traced ones)."""
        expected = self.shapes[role]
        states = list(states or [])
        if [tuple(state.shape) for state in states] != [tuple(shape) for shape in expected]:
            raise ValueError(
                f"{algorithm}: the '{role}' model returned hidden states of shapes "
                f"{[tuple(state.shape) for state in states]} in outputs['rnn'], but its get_specification() declares "
                f"{expected} for these environments: return the new hidden states in outputs['rnn'] with the sizes of "
                "get_specification()['rnn']['sizes']"
            )
        return states

    def stored(self, current: Optional[Dict[str, List[Any]]] = None) -> Dict[str, Any]:
        """The states the current step started from (``current``, by owner role: by default the carried ones; a
        compiled run passes those of its own state), by memory tensor name, one row per environment."""
        current = self.current if current is None else current
        return {
            name: self._rows_first(state)
            for role, states in current.items()
            for name, state in zip(hidden_state_names(role, len(states)), states)
        }

    def reset_where_ended(self, states: Dict[str, List[Any]], ended: Any) -> Dict[str, List[Any]]:
        """``states`` (by owner role) zeroed in the environments where an episode ended (``terminated | truncated``,
        ``(num_envs, 1)``); pure, so a compiled run applies it to the states in its own carry."""
        return {role: [self._keep_where_running(state, ended) for state in states[role]] for role in self.current}

    def end_step(self, ended: Any) -> None:
        """Make the states after the step current, zeroed where an episode ended (``terminated | truncated``)."""
        self.current = self.reset_where_ended(self.after_step, ended)
        self.after_step = dict(self.current)

    #: backend: the dtype of the stored states' memory tensors
    dtype: Any = None

    def create_memory_tensors(self, memory: Any) -> None:
        """Create the memory tensors of the stored states (:meth:`memory_tensors`); nothing without a memory."""
        if memory is None:
            return
        for name, shape in self.memory_tensors().items():
            memory.create_tensor(name=name, size=shape, dtype=self.dtype, keep_dimensions=True)

    def memory_tensors(self) -> Dict[str, Tuple[int, int]]:
        """Every stored memory tensor's per-row shape ``(num_layers, hidden_size)``."""
        return {
            name: (shape[0], shape[2])
            for role, shapes in self.shapes.items()
            for name, shape in zip(hidden_state_names(role, len(shapes)), shapes)
        }

    # -- deployment (compute_action) ------------------------------------------------------------------------------

    def set_policy_states(self, states: Optional[Sequence[Any]], episode_start: Any, where: str) -> None:
        """Start the next step of the policy from ``states`` (NumPy, the model's layout ``(num_layers, num_envs,
        hidden)``; ``None``: zeros), zeroed in the environments where ``episode_start`` is true."""
        expected = self.shapes.get(self.owners.get("policy"), [])
        if states is None:
            states = [np.zeros(shape, dtype=np.float32) for shape in expected]
        if isinstance(states, np.ndarray) or not isinstance(states, (list, tuple)):
            states = [states]  # one array for a GRU or RNN: a list of one, as returned
        states = [np.asarray(state, dtype=np.float32) for state in states]
        if [state.shape for state in states] != [tuple(shape) for shape in expected]:
            raise ValueError(
                f"{where}: hidden_states has shapes {[state.shape for state in states]}, but the policy's hidden "
                f"states for {self.num_envs} observation(s) are {[tuple(shape) for shape in expected]} "
                "(num_layers, batch, hidden_size), one array for a GRU or RNN and two for an LSTM: pass the "
                "hidden_states the previous call returned for the same observations, or None at an episode's start"
            )
        if episode_start is not None:
            starts = np.broadcast_to(np.asarray(episode_start, dtype=bool).reshape(-1), (self.num_envs,))
            states = [np.where(starts.reshape(1, -1, 1), np.float32(0.0), state) for state in states]
        if expected:
            self.current = {**self.current, "policy": [self._from_numpy(state) for state in states]}
            self.after_step = dict(self.current)

    def policy_states_after_step(self) -> List[np.ndarray]:
        """The policy's hidden states after the last step, as NumPy arrays (none for a feedforward policy)."""
        return [self._to_numpy(state) for state in self.after_step.get(self.owners.get("policy"), [])]


@contextlib.contextmanager
def hidden_states_apart(agent: Any, num_envs: int) -> Iterator[Optional[HiddenStatesCore]]:
    """Let a recurrent agent act on ``num_envs`` environments with hidden states of their own (zeros), and put its
    own back after: evaluation on another environment and ``compute_action`` leave the training run's hidden states
    as they were. Yields the separate set (``None`` for an agent that carries none)."""
    kept = getattr(agent, "hidden_states", None)
    if kept is None:
        yield None
        return
    agent.hidden_states = kept.resized(num_envs)
    try:
        yield agent.hidden_states
    finally:
        agent.hidden_states = kept
