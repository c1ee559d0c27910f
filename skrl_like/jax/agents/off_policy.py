"""JAX mechanics shared by the off-policy agents (DDPG, TD3, SAC, DQN, DDQN): target networks, replay batches for
a compiled update, exploration noise and epsilon-greedy actions. The neutral half (schedules, checks) is in
:mod:`skrl_like.core.agents.off_policy`; the polyak blend and TD targets (``td_targets``) are
in :mod:`skrl_like.jax.agents.mechanics`.

A compiled update takes the batches of all its gradient steps at once: :func:`sample_batches` draws
``gradient_steps`` independent batches where the memory keeps them and stacks them on a leading axis, so
the update can ``lax.scan`` over them with static shapes and one transfer. What the host reads back after an update
(finite flags, tracked numbers) comes as one array too (:class:`PackedReport`), and the learner state's scalars that
the last update returned pass to the next as they are (:func:`device_scalar`): the ordinary trainers' per-update host
work is then one dispatch, one read and the Python bookkeeping.

Inside a whole compiled run (:class:`~skrl_like.jax.trainers.CompiledTrainer`) the replay memory is a
:class:`Replay`: the memory's arrays, write position and ``full`` flag as explicit state, written by
:func:`replay_add` and sampled by :func:`replay_indices` / :func:`replay_batches` with a PRNG key instead of NumPy's
generator; the batches have the layout of :func:`sample_batches`, so the agent's update is the same function.

An off-policy agent with a compiled form (SAC, DQN, DDQN, DDPG, TD3) implements the compiled-agent protocol of
:mod:`skrl_like.jax.agents.base` (``docs/compiled-trainer.md``); its ``compiled_fixed_keys`` start with
:data:`REPLAY_FIXED_KEYS`.

DDPG and TD3 draw their noise from ``Noise`` objects on the host in the ordinary trainers; a compiled run draws it from
its keys (:func:`gaussian_noise`, with the ``GaussianNoise``'s mean and standard deviation; the decay of
:func:`compiled_exploration` is the neutral formula evaluated at the traced timestep).
"""

import functools
import math
import operator
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

import flax.struct
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config, logger
from skrl_like.core.agents.off_policy import (
    check_memory_to_learn,
    decayed_noise_scale,
    identical_twins_warning,
    noise_scale,
)
from skrl_like.core.agents.privileged import NEXT_PRIVILEGED_STATES, PRIVILEGED_STATES
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax.agents.mechanics import polyak_update
from skrl_like.jax.resources.noises import GaussianNoise
from skrl_like.jax.utils.distributed import compile_update, mean_over_processes

#: config numbers every replay agent reads when it is built, or that shape the compiled function: never swept
REPLAY_FIXED_KEYS = ("batch_size", "gradient_steps", "learning_starts", "random_timesteps")


def q_values(
    models: Mapping[str, Any],
    roles: Sequence[str],
    params: Sequence[Any],
    states: Any,
    actions: Any,
    sequence: Mapping[str, Any] = {},
) -> list:
    """Each critic of ``roles`` (with ``params``, in the same order) on ``(states, actions)`` and what the update's
    models read beside them (``sequence``: a recurrent agent's hidden states and episode ends) (pure)."""
    inputs = {"states": states, "taken_actions": actions, **sequence}
    return [models[role].act(inputs, role=role, params=p)[0] for role, p in zip(roles, params)]


def update_critics(
    models: Mapping[str, Any],
    learner: Any,
    roles: Sequence[str],
    states: Any,
    actions: Any,
    target_values: Any,
    sequence: Mapping[str, Any] = {},
) -> tuple:
    """One Adam step per critic of ``roles`` (learner fields ``<role>`` and ``<role>_optimizer``) at the learner's
    ``critic_learning_rate``, each on its own mean squared error to ``target_values``, the gradients averaged over
    the processes in one collective (pure): ``(learner, sum of the errors, each critic's values)``."""

    def loss(critics: tuple) -> tuple:
        values = q_values(models, roles, critics, states, actions, sequence)
        return functools.reduce(operator.add, [jnp.mean((v - target_values) ** 2) for v in values]), values

    critics = tuple(getattr(learner, role) for role in roles)
    (total, values), grads = jax.value_and_grad(loss, has_aux=True)(critics)
    stepped = {}
    for role, params, grad in zip(roles, critics, mean_over_processes(grads)):
        optimizer = getattr(learner, f"{role}_optimizer")
        stepped[f"{role}_optimizer"], stepped[role] = optimizer.apply(grad, params, learner.critic_learning_rate)
    return learner._replace(**stepped), total, values


def polyak_targets(learner: Any, sources: Sequence[str], polyak: float) -> Any:
    """``learner`` with each ``target_<source>`` moved toward ``<source>`` by ``polyak`` (pure)."""
    return learner._replace(
        **{
            f"target_{source}": polyak_update(getattr(learner, f"target_{source}"), getattr(learner, source), polyak)
            for source in sources
        }
    )


class _Parameters(flax.struct.PyTreeNode):
    params: Any


class LogEntropyCoefficient:
    """SAC's ``log(alpha)`` as the one-parameter "model" its Adam optimizer is built on (``state_dict.params`` is
    ``{"params": [log(alpha)]}``, skrl's layout)."""

    def __init__(self, entropy_coefficient: float, device: Any = None) -> None:
        self.device = device
        with jax.default_device(device):
            self.state_dict = _Parameters(self.initial_params(entropy_coefficient))

    @staticmethod
    def initial_params(entropy_coefficient: float) -> dict:
        """``{"params": [log(alpha)]}`` of the entropy coefficient ``alpha`` (also what a fresh compiled run starts
        from)."""
        return {"params": jnp.array([math.log(entropy_coefficient)], jnp.float32)}

    @property
    def value(self) -> jax.Array:
        return self.state_dict.params["params"]


def max_min_mean(values: jax.Array) -> jax.Array:
    """``(max, min, mean)`` of ``values``: what an update reports of its Q-values and targets."""
    return jnp.stack([jnp.max(values), jnp.min(values), jnp.mean(values)])


def max_min_mean_tags(tag: str, values: Any) -> Dict[str, Any]:
    """The tracked values ``"<tag> (max)"``, ``(min)`` and ``(mean)`` of reports stacked by :func:`max_min_mean`
    (their last axis)."""
    return {f"{tag} ({reduction})": values[..., index] for index, reduction in enumerate(("max", "min", "mean"))}


def init_target(algorithm: str, models: Mapping[str, Any], target_role: str, source_role: str) -> None:
    """Copy ``models[source_role]``'s parameters into ``models[target_role]`` after checking that both have the same
    parameter tree (names and shapes). Targets are never stepped by an optimizer, which is all freezing is in JAX."""
    target, source = models.get(target_role), models.get(source_role)
    if target is None or source is None:
        return
    for role, model in ((target_role, target), (source_role, source)):
        if getattr(model, "state_dict", None) is None:
            raise ValueError(
                f"{algorithm}: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                f"before creating the agent"
            )
    target_shapes = jax.tree_util.tree_map(jnp.shape, target.state_dict.params)
    source_shapes = jax.tree_util.tree_map(jnp.shape, source.state_dict.params)
    if target_shapes != source_shapes:
        raise ValueError(
            f"{algorithm}: the '{target_role}' model ({type(target).__name__}) does not have the parameters of "
            f"'{source_role}' ({type(source).__name__}): {_describe_tree(target_shapes)} vs "
            f"{_describe_tree(source_shapes)}. Build the target with the same class and arguments as its online model"
        )
    target.freeze_parameters(True)
    target.update_parameters(source, polyak=1)


def _describe_tree(shapes: Any) -> str:
    paths = jax.tree_util.tree_flatten_with_path(shapes, is_leaf=lambda x: isinstance(x, tuple))[0]
    return "{" + ", ".join(f"{jax.tree_util.keystr(path)}: {shape}" for path, shape in paths) + "}"


def warn_if_identical(algorithm: str, models: Mapping[str, Any], first: str, second: str) -> None:
    """Log :func:`~skrl_like.core.agents.off_policy.identical_twins_warning` if the two models' parameters are equal."""
    one, two = (jax.tree_util.tree_leaves(models[role].state_dict.params) for role in (first, second))
    if len(one) == len(two) and all(np.array_equal(a, b) for a, b in zip(one, two)):
        logger.warning(identical_twins_warning(algorithm, first, second))


def create_replay_tensors(memory: Any, observation_space: Any, action_space: Any, action_dtype: Any) -> None:
    """Create the replay memory's arrays: ``states``/``next_states`` (float32), ``actions`` (``action_dtype``),
    ``rewards`` (float32), ``terminated``/``truncated`` (int8); nothing without a memory."""
    if memory is None:
        return
    memory.create_tensor(name="states", size=observation_space, dtype=jnp.float32)
    memory.create_tensor(name="next_states", size=observation_space, dtype=jnp.float32)
    memory.create_tensor(name="actions", size=action_space, dtype=action_dtype)
    memory.create_tensor(name="rewards", size=1, dtype=jnp.float32)
    memory.create_tensor(name="terminated", size=1, dtype=jnp.int8)
    memory.create_tensor(name="truncated", size=1, dtype=jnp.int8)


def preprocess_privileged(agent: Any, learner: Any, batch: Transition) -> Tuple[Any, Transition]:
    """``(learner, batch)`` with the batch's privileged states before and after the step preprocessed where the
    critics read them (pure): the statistics (``learner.privileged_state_preprocessor``) updated with both, as the
    states' are with the states and the next states (torch: ``critic_states`` with the preprocessor)."""
    if PRIVILEGED_STATES not in batch.extras:
        return learner, batch
    functional = agent._privileged_state_functional
    statistics, states = functional(learner.privileged_state_preprocessor, batch.extras[PRIVILEGED_STATES], train=True)
    statistics, next_states = functional(statistics, batch.extras[NEXT_PRIVILEGED_STATES], train=True)
    extras = {**batch.extras, PRIVILEGED_STATES: states, NEXT_PRIVILEGED_STATES: next_states}
    return learner._replace(privileged_state_preprocessor=statistics), batch._replace(extras=extras)


def sample_batches(
    memory: Any, names: Sequence[str], batch_size: int, gradient_steps: int, sequence_length: int = 1
) -> Tuple[Any, ...]:
    """``gradient_steps`` fresh uniform batches of ``batch_size`` transitions, one array per name of shape
    ``(gradient_steps, batch_size, size)``, drawn in one call (one per step from a memory without replacement).
    With ``sequence_length > 1``, ``batch_size`` sequences of consecutive steps of one environment per batch
    (``batch_size * sequence_length`` rows, sequence after sequence).

    The arrays stay where the memory keeps them (NumPy with the ``"numpy"`` backend): the compiled update they are
    passed to moves them to the device as it starts, which costs less than a separate ``device_put``."""
    check_memory_to_learn("The agent", memory)  # a loop written by hand never set the running mode
    if getattr(memory, "_replacement", True):
        drawn = memory.sample(names=names, batch_size=batch_size * gradient_steps, sequence_length=sequence_length)[0]
        return tuple(array.reshape(gradient_steps, -1, *array.shape[1:]) for array in drawn)
    # without replacement within a batch only, as torch's one sample per step (one draw would cap the rows)
    drawn = [_batch_without_replacement(memory, names, batch_size, sequence_length) for _ in range(gradient_steps)]
    return tuple(np.stack([np.asarray(batch[index]) for batch in drawn]) for index in range(len(names)))


def _batch_without_replacement(memory: Any, names: Sequence[str], batch_size: int, sequence_length: int = 1) -> list:
    """``batch_size`` rows drawn without replacement; while the memory holds fewer rows, each of them once and the
    rest drawn again uniformly (NumPy's generator, as the memory's). skrl returns the fewer rows: a batch of another
    shape at every step until the memory holds ``batch_size`` rows, so the jitted update compiled again each time."""
    batch = memory.sample(names=names, batch_size=batch_size, sequence_length=sequence_length)[0]
    missing = batch_size - len(batch[0])
    if missing <= 0 or sequence_length > 1:  # an _RNN agent's update waits for batch_size sequences
        return batch
    again = memory.sample_by_index(names=names, indexes=np.random.randint(0, len(memory), missing))[0]
    return [np.concatenate([np.asarray(first), np.asarray(second)]) for first, second in zip(batch, again)]


class PackedReport:
    """A pure update ``function(*args) -> (learner, report)`` whose ``report`` (the finite flags and the tracked
    numbers) comes back from the device as ONE array, so that reading it costs one host transfer per update.

    ``jax.device_get`` of a report pytree copies leaf by leaf, with Python work per leaf (about 25 us for DQN's six
    leaves, 250 us for TD3's nine on a loaded CPU), which is per-step overhead next to an update of a few hundred us.
    Calling this object (inside ``jit``) returns ``(learner, packed)``: every leaf's bits in one ``uint32`` vector
    (32-bit leaves bit-cast, narrower ones widened), exact for every dtype; :meth:`unpack` rebuilds the report on the
    host as NumPy arrays of the original shapes and dtypes, the same values ``jax.device_get`` returns.
    """

    def __init__(self, function: Callable) -> None:
        self._function = function
        self._layout: Optional[Tuple[Any, tuple]] = None  # (treedef, ((shape, dtype), ...)): recorded when traced
        self._plan: Optional[Tuple[Any, Any, list]] = None  # (layout, treedef, [(start, stop, shape, dtype)])

    def __call__(self, *args: Any) -> Tuple[Any, jax.Array]:
        learner, report = self._function(*args)
        leaves, treedef = jax.tree_util.tree_flatten(report)
        self._layout = (treedef, tuple((leaf.shape, np.dtype(leaf.dtype)) for leaf in leaves))
        words = [_to_words(jnp.ravel(leaf)) for leaf in leaves]
        return learner, jnp.concatenate(words) if words else jnp.zeros((0,), jnp.uint32)

    def unpack(self, packed: Any) -> Any:
        """The report of ``packed`` (the second result of a call), as NumPy arrays: the one host transfer."""
        words = np.asarray(packed)
        if self._plan is None or self._plan[0] is not self._layout:  # the slices, worked out once per tracing
            treedef, layout = self._layout
            bounds = np.cumsum([0] + [int(np.prod(shape, dtype=np.int64)) for shape, _ in layout])
            slices = [
                (int(start), int(stop), shape, dtype) for start, stop, (shape, dtype) in zip(bounds, bounds[1:], layout)
            ]
            self._plan = (self._layout, treedef, slices)
        _, treedef, slices = self._plan
        leaves = [_from_words(words[start:stop], dtype).reshape(shape) for start, stop, shape, dtype in slices]
        return jax.tree_util.tree_unflatten(treedef, leaves)


def compile_packed_update(agent: Any) -> None:
    """Compile the agent's pure ``_learn(learner, *inputs, timestep) -> (learner, report)`` with its report packed:
    ``agent._packed_learn`` (:class:`PackedReport`) and ``agent._update_fn`` (``jax.jit``, or one SPMD program over
    the processes), which :func:`learn_deferred` runs."""
    agent._packed_learn = PackedReport(agent._learn)
    agent._update_fn = compile_update(agent._packed_learn)


def learn_deferred(agent: Any, timestep: int, batches: Any) -> None:
    """One update whose report stays on the device: the learner is committed at once, and the finite flags and tracked
    values are read at the next write or checkpoint step (``agent._handle_report``); with writing off they are read
    now (one transfer) and checked (``agent.check_update`` raises naming the first non-finite quantity) before the
    learner is committed, so that a failed check leaves the agent untouched."""
    inputs = (batches, np.int32(timestep))
    if not config.jax.is_distributed:  # the host's draws cross explicitly (the update never reads the host)
        inputs = agent._to_device(inputs)
    learner, packed = agent._update_fn(agent.gather_learner(), *inputs)
    if agent.write_interval > 0:
        agent.commit_learner(learner)
        agent._keep_report(timestep, packed)
        return
    records = agent._packed_learn.unpack(packed)  # writing off: read now (one transfer), checked before the commit
    agent.check_update(timestep, learner, records)
    agent.commit_learner(learner)
    track_records(agent, records)


def track_gradient_steps(agent: Any, timestep: int, packed: np.ndarray) -> None:
    """A kept report read back: checked (naming the first non-finite quantity), then tracked one value per gradient
    step; a value NaN by design is left out (TD3's policy loss on a gradient step without a policy step: a NaN that
    is not by design has raised in the check)."""
    records = agent._packed_learn.unpack(packed)
    agent.check_update(timestep, agent.gather_learner(), records)
    track_records(agent, records)


def track_records(agent: Any, records: Any) -> None:
    """An update's checked records tracked one value per gradient step, or one per update where the agent reduces
    them over its steps (DQN); those NaN by design left out."""
    for tag, values in agent.tracked_values(records).items():
        for value in np.atleast_1d(values):
            if not np.isnan(value):
                agent.track_data(tag, value)


def _to_words(values: jax.Array) -> jax.Array:
    if values.dtype.itemsize == 4:
        return jax.lax.bitcast_convert_type(values, jnp.uint32)
    if jnp.issubdtype(values.dtype, jnp.floating):  # float16 / bfloat16: float32 holds them exactly
        return jax.lax.bitcast_convert_type(values.astype(jnp.float32), jnp.uint32)
    return jax.lax.bitcast_convert_type(values.astype(jnp.int32), jnp.uint32)  # bool, int8, int16, uint8, ...


def _from_words(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.itemsize == 4:
        return words.view(dtype)
    if jnp.issubdtype(dtype, jnp.floating):  # NumPy does not count bfloat16 as floating
        return words.view(np.float32).astype(dtype)
    return words.view(np.int32).astype(dtype)


def device_scalar(value: Any, dtype: Any) -> jax.Array:
    """``value`` as a ``dtype`` device scalar for a learner state: an array of that dtype (what the last update
    returned) passes as it is, anything else (a Python number, a NumPy scalar) is converted. ``jnp.asarray`` on
    an array that needs no conversion still goes through a Python dispatch (~6 us) per call."""
    if isinstance(value, jax.Array) and value.dtype == dtype:
        return value
    return jnp.asarray(value, dtype)


def stack_samples(samples: Sequence[Any]) -> Any:
    """Stack noise samples on a new leading axis, on the host when they are NumPy (the ``"numpy"`` backend: the
    compiled update they are passed to moves them in one go, while an eager ``jnp.stack`` costs a device dispatch
    and a transfer per sample), on the device otherwise."""
    if all(isinstance(sample, np.ndarray) for sample in samples):
        return np.stack(samples).astype(np.float32, copy=False)
    return jnp.stack([jnp.asarray(sample, jnp.float32) for sample in samples])


def exploration_act(
    actions: jax.Array,
    noise: Optional[Any],
    exploration: Mapping[str, Any],
    timestep: int,
    timesteps: int,
    low: jax.Array,
    high: jax.Array,
    track: Callable[[str, Any], None],
    host: bool = False,
) -> Any:
    """DDPG's and TD3's exploration: the policy's deterministic ``actions`` plus scaled noise, clipped to the bounds.

    :param actions: the policy's actions, ``(num_envs, action_size)``.
    :param noise: ``cfg["exploration"]["noise"]``, a ``Noise`` instance (NumPy or JAX samples); ``None``:
        ``actions`` are returned as they are and nothing is tracked.
    :param exploration: ``cfg["exploration"]`` (``initial_scale``, ``final_scale``, ``timesteps``); a ``timesteps``
        of ``None`` means the trainer's ``timesteps`` (the dict is not changed).
    :param timestep: the current timestep.
    :param timesteps: the trainer's number of timesteps.
    :param low: the action space's lower bounds.
    :param high: the action space's upper bounds.
    :param track: the agent's ``track_data``; it receives ``"Exploration / Exploration noise (max|min|mean)"``.
    :param host: the agent hands NumPy actions to the env (the ``"numpy"`` backend): with a NumPy noise sample the
        arithmetic runs on the host, on ``actions`` transferred once, and NumPy actions come back (the same float32
        operations as on the device; each eager ``jnp`` operation would cost a device dispatch, and each tracked
        device scalar a transfer, at every step).
    :return: ``clip(actions + scale * noise, low, high)`` while ``timestep <= exploration["timesteps"]``, with the
        linearly decayed scale of :func:`skrl_like.core.agents.off_policy.noise_scale`; after the decay the actions
        unchanged, with the three tags tracked as 0 (skrl adds no noise at all then). The noise is sampled in both
        cases, so the noise's random stream does not depend on the decay.
    """
    if noise is None:
        return actions
    sampled = noise.sample(actions.shape)
    if exploration["timesteps"] is None:
        exploration = {**exploration, "timesteps": timesteps}
    scale = noise_scale(timestep, exploration)
    if scale is None:
        for reduction in ("max", "min", "mean"):
            track(f"Exploration / Exploration noise ({reduction})", 0)
        return actions
    if host and isinstance(sampled, np.ndarray):
        actions = np.asarray(actions)  # the step's one host transfer
        sampled = sampled.astype(actions.dtype, copy=False) * actions.dtype.type(scale)
        track("Exploration / Exploration noise (max)", sampled.max())
        track("Exploration / Exploration noise (min)", sampled.min())
        track("Exploration / Exploration noise (mean)", sampled.mean())
        return np.clip(actions + sampled, np.asarray(low), np.asarray(high))
    sampled = jnp.asarray(sampled, dtype=actions.dtype) * scale
    track("Exploration / Exploration noise (max)", jnp.max(sampled))
    track("Exploration / Exploration noise (min)", jnp.min(sampled))
    track("Exploration / Exploration noise (mean)", jnp.mean(sampled))
    return jnp.clip(actions + sampled, low, high)


def gaussian_noise(key: jax.Array, shape: Sequence[int], noise: GaussianNoise) -> jax.Array:
    """``shape`` float32 samples of ``noise``'s ``N(mean, std)`` drawn from ``key`` (pure): a compiled run's
    exploration and smoothing noise."""
    return jax.random.normal(key, tuple(shape), jnp.float32) * noise.std + noise.mean


def compiled_exploration(
    key: jax.Array,
    actions: jax.Array,
    exploration: Mapping[str, Any],
    timestep: jax.Array,
    timesteps: int,
    low: jax.Array,
    high: jax.Array,
) -> jax.Array:
    """:func:`exploration_act` inside a compiled run (traced ``timestep``, nothing tracked): the noise drawn from
    ``key`` (:func:`gaussian_noise`), scaled by the neutral decay; after the decay the actions unchanged (and
    unclipped), as ``act`` returns them."""
    noise = exploration["noise"]
    if noise is None:
        return actions
    if exploration["timesteps"] is None:
        exploration = {**exploration, "timesteps": timesteps}
    sampled = gaussian_noise(key, actions.shape, noise).astype(actions.dtype)
    noisy = jnp.clip(actions + sampled * decayed_noise_scale(timestep, exploration), low, high)
    return jnp.where(timestep > exploration["timesteps"], actions, noisy)


def compiled_noise_obstacles(cfg: Mapping[str, Any], keys: Sequence[str]) -> list:
    """The noises among ``cfg[key]`` (``"exploration"``: its ``"noise"``) that a compiled run cannot draw, each with
    its fix: it draws ``GaussianNoise`` only, from its keys (an Ornstein-Uhlenbeck process keeps host state)."""
    obstacles = []
    for name in keys:
        noise = cfg[name]["noise"] if name == "exploration" else cfg[name]
        if noise is not None and not isinstance(noise, GaussianNoise):
            where = "cfg['exploration']['noise']" if name == "exploration" else f"cfg[{name!r}]"
            obstacles.append(
                f"{where} = {type(noise).__name__}: a compiled run draws Gaussian noise from its keys; use "
                "GaussianNoise(mean, std) (skrl_like.jax.resources.noises)"
            )
    return obstacles


def smoothed_target_actions(
    actions: jax.Array, sampled_noise: Optional[jax.Array], clip: float, low: jax.Array, high: jax.Array
) -> jax.Array:
    """TD3's target policy smoothing inside a compiled update: ``clip(a + clip(noise, -c, c), low, high)`` with noise
    drawn on the host beforehand (so any ``Noise`` works and a run matches torch's draw for draw); ``actions`` when
    there is no noise."""
    if sampled_noise is None:
        return actions
    return jnp.clip(actions + jnp.clip(sampled_noise, -clip, clip), low, high)


def epsilon_greedy(key: jax.Array, random_actions: jax.Array, greedy_actions: jax.Array, epsilon: float) -> jax.Array:
    """Per row: the random action with probability ``epsilon``, else the greedy one (both ``(N, 1)``)."""
    explore = jax.random.uniform(key, (random_actions.shape[0], 1)) < epsilon
    return jnp.where(explore, random_actions, greedy_actions)


class Replay(NamedTuple):
    """A replay memory as explicit state, for a compiled run: ``data`` holds one ``(memory_size, num_envs, size)``
    array per name (a :class:`Transition`, in the memory's dtypes), ``position`` the next row to write (the memory's
    ``memory_index``) and ``full`` whether it wrapped (the memory's ``filled``); ``key`` is the stream of its draws
    and of the warm-up random actions (NumPy's global generator in the ordinary trainers)."""

    data: Any
    position: jax.Array  # int32
    full: jax.Array  # bool
    key: jax.Array


def replay_from_memory(memory: Any, key: jax.Array) -> Replay:
    """The memory's contents and cursor as a :class:`Replay` (its data a :class:`Transition`)."""
    if memory.env_index:
        raise ValueError(
            f"the replay memory is part-way through a timestep (env_index={memory.env_index}): a compiled run writes "
            "whole timesteps; reset the memory or complete the timestep"
        )
    return Replay(
        data=Transition(*(jnp.asarray(memory.tensors[name]) for name in TRANSITION_NAMES)),
        position=jnp.asarray(memory.memory_index, jnp.int32),
        full=jnp.asarray(memory.filled, jnp.bool_),
        key=key,
    )


def replay_to_memory(replay: Replay, memory: Any) -> None:
    """Write a :class:`Replay` back into the memory (``set_tensor_by_name``: in place for a host storage, whose views
    stay valid), so the ordinary trainers go on from it."""
    for name, array in replay.data.fields().items():  # host or device storage alike
        memory.set_tensor_by_name(name, array)
    memory.memory_index, memory.env_index = int(replay.position), 0
    memory.filled = bool(replay.full)


def empty_replay(replay: Replay, key: jax.Array) -> Replay:
    """A :class:`Replay` of the same shapes with nothing written and the stream ``key`` (a fresh run's)."""
    zeros = jax.tree_util.tree_map(jnp.zeros_like, replay.data)
    return Replay(zeros, jnp.zeros((), jnp.int32), jnp.zeros((), bool), key)


def replay_add(replay: Replay, row: Any) -> Replay:
    """Write one timestep (``row``: a :class:`Transition` as the memory stores it, ``(num_envs, size)`` per field, the
    agent's ``compiled_transition``) at the position (pure)."""
    data = jax.tree_util.tree_map(lambda array, value: array.at[replay.position].set(value), replay.data, row)
    memory_size = jax.tree_util.tree_leaves(replay.data)[0].shape[0]
    position = (replay.position + 1) % memory_size
    return Replay(data, position, jnp.logical_or(replay.full, position == 0), replay.key)


def replay_indices(key: jax.Array, replay: Replay, batch_size: int, gradient_steps: int) -> jax.Array:
    """``(gradient_steps, batch_size)`` uniform draws, with replacement, of the rows written so far, numbered as the
    memory numbers them (``timestep * num_envs + env``, :meth:`Memory.sample_by_index`)."""
    memory_size, num_envs = jax.tree_util.tree_leaves(replay.data)[0].shape[:2]
    written = jnp.where(replay.full, memory_size, replay.position) * num_envs
    return jax.random.randint(key, (gradient_steps, batch_size), 0, jnp.maximum(written, 1))


def replay_batches(replay: Replay, indices: jax.Array) -> Any:
    """The rows ``indices`` (:func:`replay_indices`) of every field: a :class:`Transition`, ``indices.shape + (size,)``."""
    num_envs = jax.tree_util.tree_leaves(replay.data)[0].shape[1]
    time, env = indices // num_envs, indices % num_envs
    return jax.tree_util.tree_map(lambda array: array[time, env], replay.data)


def random_actions(key: jax.Array, action_space: Any, num_envs: int) -> jax.Array:
    """Uniform random actions of a compiled run's warm-up (``random_timesteps``), as ``random_act`` draws them:
    within a ``Box``'s bounds, or ``(num_envs, 1)`` int32 indices of a ``Discrete`` space (pure)."""
    if isinstance(action_space, gymnasium.spaces.Discrete):
        return jax.random.randint(key, (num_envs, 1), 0, action_space.n, jnp.int32)
    low, high = jnp.asarray(action_space.low), jnp.asarray(action_space.high)
    return jax.random.uniform(key, (num_envs, *action_space.shape), jnp.float32, low, high)


def compiled_replay_obstacles(agent: Any) -> list:
    """The replay settings of an off-policy agent that a compiled run cannot reproduce, each with its fix."""
    obstacles = []
    if agent.memory is None:
        obstacles.append("no memory: pass a RandomMemory, which the compiled run keeps as arrays in its state")
    elif not getattr(agent.memory, "_replacement", True):
        obstacles.append(
            "a memory sampled without replacement: the compiled replay draws rows with replacement; create "
            "RandomMemory(..., replacement=True)"
        )
    if agent.secondary_memories:
        obstacles.append(
            f"{len(agent.secondary_memories)} secondary memories: the replay lives inside the compiled function; "
            "pass only one memory"
        )
    if agent.privileged_roles:
        obstacles.append(
            f"the {', '.join(agent.privileged_roles)} model(s) read the env's privileged states, which the compiled "
            "replay does not hold; train with SequentialTrainer"
        )
    return obstacles
