"""The JAX ``Agent`` base: the neutral bookkeeping plus flax serialization of module states.

Checkpoint modules are models and preprocessors (objects with a ``state_dict`` whose ``params`` are saved)
and optimizers.

Optimizers and jitted learners, one convention:

* The agent owns its optimizers as attributes (``agent.policy_optimizer``, ...): immutable ``Optimizer`` pytrees,
  rebound after every step. ``checkpoint_modules[name]`` holds no optimizer state of its own: it is an
  :class:`OptimizerEntry` (registered with ``_register_optimizer(name)``) whose ``state`` reads and writes through
  to ``getattr(agent, name)``. Saving reads the current optimizer; loading rebinds the attribute, so the next update
  starts from the loaded state. Nothing is written back into ``checkpoint_modules`` after an update.
* A jitted update takes and returns one ``NamedTuple`` pytree of everything it changes (the agent's
  :attr:`Agent.learner_type`), its fields named after the checkpoint entries (``policy``, ``value``,
  ``policy_optimizer``, ``value_optimizer``, ``state_preprocessor``, ``value_preprocessor``, plus e.g.
  ``learning_rate``). :meth:`Agent.gather_learner` reads it from the agent before the update and
  :meth:`Agent.commit_learner` writes the returned one back after the host has checked it, both by field name (the
  rules are in :meth:`Agent.gather_learner`), so no algorithm writes that plumbing; a failed check leaves the agent
  untouched. :meth:`Agent.fresh_learner` draws a new one from a key (a seeded compiled run).

The compiled-agent protocol (what :class:`~skrl_like.jax.trainers.CompiledTrainer` calls, documented in
``docs/compiled-trainer.md``) is the ``compiled_*`` methods below and the learner methods above.
"""

import contextlib
import copy
import numbers
import pickle
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple

import flax.serialization
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents.base import AgentCore
from skrl_like.core.agents.config import TORCH_ONLY_KEYS
from skrl_like.core.agents.privileged import privileged_names
from skrl_like.core.agents.recurrent import zero_state_shapes
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax import models
from skrl_like.jax.agents.mechanics import fresh_optimizer, initial_learning_rate, make_adam, step_scheduler
from skrl_like.jax.agents.off_policy import sample_batches
from skrl_like.jax.agents.tracking import EpisodeTracker
from skrl_like.jax.envs.wrappers.base import flat_observations
from skrl_like.jax.models.base import restore_tree


class Agent(AgentCore):
    __doc__ = AgentCore.__doc__

    checkpoint_extension = ".pickle"
    ignored_config_keys = TORCH_ONLY_KEYS  # configs shared with torch may set them

    @property
    def _jax(self) -> bool:
        """Arrays are JAX arrays (``config.jax.backend == "jax"``), not NumPy arrays."""
        return config.jax.backend == "jax"

    def _parse_device(self, device: Any) -> jax.Device:
        return config.jax.parse_device(device)

    def _split_run_key(self) -> jax.Array:
        """A random stream of this agent's own, split off the run's key (``set_seed`` makes it reproducible) and
        placed on the agent's device: not JAX's default one, or a CPU agent on a GPU machine would copy its key
        between devices at every step."""
        config.jax.key, key = jax.random.split(config.jax.key)
        return self._to_device(np.asarray(key))

    def _to_device(self, tree: Any) -> Any:
        """``tree``'s host values as arrays on the agent's device, uncommitted as a jitted update's outputs are (one
        compilation for both), never on JAX's default device when that is another."""
        with jax.default_device(self.device):
            return jax.device_put(tree)

    def _broadcast_models(self) -> None:
        # a model without parameters yet is left to the algorithm's check, which names the missing init_state_dict
        if config.jax.is_distributed:
            for model in {id(model): model for model in self.models.values() if model is not None}.values():
                if getattr(model, "state_dict", None) is not None:
                    model.broadcast_parameters()

    def _get_internal_value(self, module: Any) -> Any:
        if hasattr(module, "state_dict"):
            return module.state_dict.params
        if hasattr(module, "state"):  # optimizer: its optax state
            return module.state
        return module

    def _copy_state(self, state: Any) -> Any:
        with jax.default_device(self.device):
            return copy.deepcopy(state)

    def _write_states(self, states: Any, file: BinaryIO) -> None:
        if isinstance(states, dict):
            payload = {name: flax.serialization.to_bytes(state) for name, state in states.items()}
        else:
            payload = flax.serialization.to_bytes(states)
        pickle.dump(payload, file, protocol=4)

    def _write_module(self, state: Any, file: BinaryIO) -> None:
        file.write(flax.serialization.to_bytes(state))  # the format of Model.save, which Model.load reads

    def _read_states(self, path: str) -> Any:
        with open(path, "rb") as file:
            return pickle.load(file)

    def _check_state(self, name: str, module: Any, state: Any) -> Any:
        if not (hasattr(module, "state_dict") or hasattr(module, "state")):
            raise NotImplementedError(f"The '{name}' module ({type(module).__name__}) cannot load a state")
        return restore_tree(self._get_internal_value(module), state)

    def _restore_state(self, name: str, module: Any, state: Any) -> None:
        # flax restores NumPy arrays: make them arrays like the ones an update returns (uncommitted, on the agent's
        # device), or the next compiled update would be compiled again for NumPy arguments (after every restore)
        with jax.default_device(self.device):
            state = jax.tree_util.tree_map(jnp.asarray, state)
        if hasattr(module, "state_dict"):
            module.state_dict = module.state_dict.replace(params=state)
        else:  # an optimizer: its entry rebinds the agent's attribute
            self.checkpoint_modules[name] = module.replace(state=state)

    def _is_array(self, value: Any) -> bool:
        return isinstance(value, jax.Array)

    def _stateful_attributes(self) -> dict:
        # parameter holders outside checkpoint_modules (e.g. SAC's log entropy coefficient, learned with its own Adam)
        return {
            name: value
            for name, value in vars(self).items()
            if hasattr(getattr(value, "state_dict", None), "params") and not isinstance(value, type)
        }

    def _encode_state(self, state: Any) -> Any:
        return flax.serialization.to_bytes(state)  # what _check_state reads, as from a file of Agent.save

    def _read_scalars(self, values: List[Any]) -> List[float]:
        return [float(np.asarray(value).reshape(())) for value in jax.device_get(values)]  # one transfer for all

    def _read_arrays(self, arrays: List[Any]) -> List[np.ndarray]:
        return [np.asarray(array) for array in jax.device_get(arrays)]

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        return EpisodeTracker(capacity)

    def _observations_to_backend(self, space: gymnasium.Space, observations: Any) -> Any:
        flat = flat_observations(space, observations)  # the layout and dtypes of the JAX env wrappers
        return jax.device_put(flat, self.device) if self._jax else flat

    def _actions_to_numpy(self, actions: Any) -> np.ndarray:
        array = np.asarray(jax.device_get(actions))
        return array.astype(np.float32) if array.dtype == jnp.bfloat16 else array

    def _is_distributed_worker(self) -> bool:
        return config.jax.is_distributed and config.jax.rank != 0

    # -- the learner state: gathered before an update and committed after it, by field name -------------------------

    #: the ``NamedTuple`` of everything the agent's jitted update changes (``None``: no jitted update)
    learner_type: Any = None

    #: each learning rate's config key and the learner field its update reads it from (a traced argument of the
    #: optimizers, held between updates in the attribute ``_<field>``; a CompiledTrainer sweep over the key puts one
    #: rate per run into that field)
    learning_rate_fields: Dict[str, str] = {"learning_rate": "learning_rate"}

    def gather_learner(self) -> Any:
        """The agent's :attr:`learner_type`, each field read from the agent by its name:

        * a model role (or an attribute with a ``state_dict``, SAC's log entropy coefficient): its parameters;
        * ``<name>_preprocessor``: the running statistics of the functional preprocessor ``_<name>_functional``;
        * ``[<role>_]optimizer``: the optimizer held in the attribute of that name (``None`` or ``()`` when absent);
        * anything else (learning rates, keys, counters): the attribute ``_<field>``; a learning rate as a float32
          device scalar, any other Python number as an int32 or float32 one (strongly typed, so that the update
          compiles once).
        """
        return self.learner_type(*(self._learner_field(name) for name in self.learner_type._fields))

    def commit_learner(self, learner: Any) -> None:
        """Write every field of ``learner`` back where :meth:`gather_learner` read it."""
        for name, value in zip(learner._fields, learner):
            holder = self._parameter_holder(name)
            if holder is not None:
                holder.state_dict = holder.state_dict.replace(params=value)
            elif name.endswith("_preprocessor"):
                self._functional_preprocessor(name).state = value
            else:
                setattr(self, name if name.endswith("optimizer") else f"_{name}", value)

    def fresh_learner(self, learner: Any, key: jax.Array) -> Any:
        """``learner`` with new parameters drawn from ``key`` for every trained model (the models' initialisers; a
        ``target_<role>`` starts as a copy of ``<role>``) and fresh optimizer states, then :meth:`_fresh_extras` with
        a key of its own (pure: one per seed in a vmapped compiled run). Statistics and learning rates are kept."""
        trained = [name for name in learner._fields if name in self.models and not name.startswith("target_")]
        keys = jax.random.split(key, len(trained) + 1)
        fresh = {role: self.models[role].initial_params(role, role_key) for role, role_key in zip(trained, keys)}
        for name in learner._fields:
            source = name[len("target_") :] if name.startswith("target_") else None
            role = trained[0] if name == "optimizer" else name[: -len("_optimizer")]
            if source in fresh:
                fresh[name] = fresh[source]
            elif name.endswith("optimizer") and role in fresh:
                fresh[name] = fresh_optimizer(getattr(learner, name), fresh[role])
        return self._fresh_extras(learner._replace(**fresh), keys[-1])

    def _fresh_extras(self, learner: Any, key: jax.Array) -> Any:
        """What else a fresh run starts from besides the models and optimizers (SAC: the initial entropy coefficient
        and a new random stream; TD3: no critic step yet)."""
        return learner

    def _parameter_holder(self, name: str) -> Any:
        holder = self.models.get(name, getattr(self, name, None))
        return holder if hasattr(holder, "state_dict") and not isinstance(holder, type) else None

    def _functional_preprocessor(self, name: str) -> Any:
        return getattr(self, f"_{name[: -len('_preprocessor')]}_functional")

    def _learner_field(self, name: str) -> Any:
        holder = self._parameter_holder(name)
        if holder is not None:
            return holder.state_dict.params
        if name.endswith("_preprocessor"):
            return self._functional_preprocessor(name).state
        if name.endswith("optimizer"):
            return getattr(self, name, None)
        value = getattr(self, f"_{name}")
        # a Python number crosses to the device explicitly (once: the update's learner keeps it there)
        if name in self.learning_rate_fields.values():
            return (
                value
                if isinstance(value, jax.Array) and value.dtype == jnp.float32
                else self._to_device(np.asarray(value, np.float32))
            )
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, jax.Array)):
            return self._to_device(np.asarray(value, np.int32 if isinstance(value, numbers.Integral) else np.float32))
        return value

    def learning_rate_keys(self) -> Tuple[str, ...]:
        return tuple(self.learning_rate_fields)

    def _has_learning_rate(self, key: str) -> bool:
        return key in self.learning_rate_keys()

    def _apply_learning_rate(self, key: str, value: float) -> None:
        # the next gather puts it into the learner state: a new value of a traced argument, nothing recompiles
        setattr(self, f"_{self.learning_rate_fields[key]}", jnp.asarray(value, jnp.float32))

    # -- the compiled-agent protocol (CompiledTrainer; docs/compiled-trainer.md) -------------------------------------

    #: config numbers read when the agent is built or that shape the compiled function: never swept in a compiled run
    compiled_fixed_keys: Tuple[str, ...] = ()
    #: learner fields equal in every run of a vmapped compiled run (passed once: TD3's count of critic steps)
    compiled_shared_fields: Tuple[str, ...] = ()

    def _acting_inputs(self) -> Dict[str, Any]:
        """What the jitted act passes to the policy beside the states (an argument of it, so never baked in):
        nothing here; a recurrent agent's carried hidden states."""
        return {}

    def _replay_batches(self) -> Transition:
        """``gradient_steps`` fresh replay batches of ``cfg["batch_size"]`` rows (leaves ``(gradient_steps, rows,
        size)``; in ``extras`` the privileged states where the critics read them, or a recurrent agent's stored
        hidden states)."""
        cfg = self.cfg
        names = (*TRANSITION_NAMES, *privileged_names(self))  # the privileged states where the critics read them
        return Transition.from_fields(
            dict(zip(names, sample_batches(self.memory, names, cfg["batch_size"], cfg["gradient_steps"])))
        )

    def _sequence_inputs(self, batch: Transition) -> Dict[str, Any]:
        """What every model of a gradient step on ``batch`` reads beside its states (pure): nothing here; a recurrent
        agent's hidden states and episode ends."""
        return {}

    def compiled_obstacles(self) -> List[str]:
        """The configured options that cannot run inside one compiled function, each with its fix (``[]``: none)."""
        return [f"{type(self).__name__} has no compiled form yet"]

    def compiled_start(self) -> Tuple[Any, jax.Array]:
        """``(learner, key)``: the learner state and the acting stream a compiled run starts from (an agent that acts
        with host noise gets an acting stream of its own here, split off the run's key)."""
        if getattr(self, "_key", None) is None:
            self._key = self._split_run_key()
        return self.gather_learner(), self._key

    def compiled_act(
        self, learner: Any, key: jax.Array, states: jax.Array, timestep: jax.Array, timesteps: int
    ) -> Tuple[Any, jax.Array, jax.Array]:
        """``act`` inside a compiled run (traced, warm-up excepted: the trainer applies ``schedule.acts_randomly``):
        ``(learner, key, actions)``."""
        raise NotImplementedError

    def fresh_acting(self, acting: Any, key: jax.Array) -> Any:
        """The acting state a seeded compiled run starts from (``acting``: the one :meth:`compiled_start` returned):
        the key; a recurrent agent adds zero hidden states."""
        return key

    def compiled_end_step(self, acting: Any, transition: Transition) -> Tuple[Any, Transition]:
        """After the environment step of a compiled on-policy run (traced): ``(acting, transition)``, the acting state
        for the next step and the transition the rollout stores. Unchanged here; a recurrent agent stores the hidden
        states the step started from and carries the new ones, zeroed where an episode ended (as
        ``record_transition`` does)."""
        return acting, transition

    def compiled_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: Any,
        timesteps: int,
    ) -> Transition:
        """The :class:`Transition` that ``record_transition`` stores for this step, as the memory holds it (its
        dtypes, ``(num_envs, size)`` rows): what a compiled run writes into its rollout or replay (traced)."""
        stored = self.transition_to_store(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        ).fields()
        num_envs, tensors = self.memory.num_envs, self.memory.tensors
        return Transition(
            *(jnp.asarray(stored[name]).reshape(num_envs, -1).astype(tensors[name].dtype) for name in TRANSITION_NAMES)
        )

    def compiled_learn(self, learner: Any, data: Transition, timestep: jax.Array, key: jax.Array) -> Tuple[Any, Any]:
        """The update inside a compiled run (traced): ``(learner, report)`` from ``data`` (on-policy: the rollout,
        ``(rollouts, num_envs, size)`` per field; off-policy: the sampled batches, ``(gradient_steps, batch_size,
        size)``) and ``key`` for what the update draws besides (TD3's smoothing noise)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def compiled_config(self, values: Dict[str, Any]) -> Iterator[None]:
        """While tracing a compiled run that sweeps a config number: the agent's pure functions read ``cfg[key]`` as
        ``values[key]`` (traced, one per run), and the agent's own cfg is back as it was afterwards."""
        cfg = self.cfg
        self.cfg = {**cfg, **values}
        try:
            yield
        finally:
            self.cfg = cfg

    def compiled_commit(self, learner: Any, key: jax.Array) -> None:
        """Put a compiled run's learner state and acting stream into the agent (the learner's own key, if it has
        one, last: SAC acts and updates from one stream)."""
        self._key = key
        self.commit_learner(learner)

    def check_update(self, timestep: int, learner: Any, report: Any) -> None:
        """Raise ``ValueError`` naming the first non-finite quantity of an update's ``report``, before anything of
        ``learner`` is committed."""
        raise NotImplementedError

    def tracked_values(self, report: Any, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, by TensorBoard tag, from its ``report`` (any leading axes): the learning rates with
        a schedule, or with ``learning_rates`` (a compiled run that sweeps one)."""
        raise NotImplementedError

    def _adopt_models(self, roles: Sequence[str]) -> None:
        """Require the models of ``roles``, each with parameters, and make each the attribute and the checkpoint entry
        of its role's name."""
        self._require_models(roles)
        for role in roles:
            if getattr(self.models[role], "state_dict", None) is None:
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model has no parameters yet: call "
                    f"{role}.init_state_dict('{role}') before creating the agent"
                )
            setattr(self, role, self.models[role])
            self.checkpoint_modules[role] = self.models[role]

    def _make_optimizers(self, learning_rates: Dict[str, float]) -> None:
        """One Adam per model role of ``learning_rates`` (each clipping its own gradients), held as
        ``<role>_optimizer`` and checkpointed under that name; the update passes the rate (see ``make_adam``)."""
        for role, learning_rate in learning_rates.items():
            optimizer = make_adam(
                self.models[role], learning_rate, self._learning_rate_schedule, self.cfg["grad_norm_clip"]
            )
            setattr(self, f"{role}_optimizer", optimizer)
            self._register_optimizer(f"{role}_optimizer")

    def _start_learning_rate_schedule(self, fields: Sequence[str]) -> None:
        """The scheduled learning rates ``fields`` (attributes ``_<field>``) as their schedule starts them
        (``LinearLR`` scales them by its start factor, as torch's does when built), no scheduler step taken yet."""
        for field in fields:
            rate = getattr(self, f"_{field}")
            setattr(self, f"_{field}", initial_learning_rate(self._scheduler_class, self._learning_rate_schedule, rate))
        self._scheduler_steps = 0

    def _scheduled_rates(
        self, learner: Any, fields: Sequence[str], timestep: Any, kl: Any = None
    ) -> Dict[str, jax.Array]:
        """The learning rates of ``fields`` after one step of the configured schedule (traced; ``kl`` for
        ``KLAdaptiveLR``), and the learner's count of scheduler steps (``LinearLR``'s factor depends on it)."""
        steps = learner.scheduler_steps
        rates = {
            field: jnp.asarray(
                step_scheduler(
                    self._scheduler_class, self._learning_rate_schedule, getattr(learner, field), timestep, kl, steps
                ),
                jnp.float32,
            )
            for field in fields
        }
        return {**rates, "scheduler_steps": steps + 1}

    @staticmethod
    def _non_finite_parameter_names(learner: Any, roles: Sequence[str]) -> List[str]:
        """Each non-finite parameter of the models ``roles`` in ``learner``, named for an error message."""
        return [
            f"parameter '{jax.tree_util.keystr(path, simple=True, separator='/')}' of the {role} model"
            for role in roles
            for path, leaf in jax.tree_util.tree_leaves_with_path(getattr(learner, role))
            if not np.isfinite(np.asarray(leaf)).all()
        ]

    def _register_optimizer(self, name: str) -> None:
        """Make the optimizer held in ``self.<name>`` the checkpoint entry ``name`` (read and written through)."""
        self.checkpoint_modules[name] = OptimizerEntry(self, name)

    _policy_distributions = (
        (models.CategoricalMixin, "categorical"),
        (models.MultiCategoricalMixin, "multicategorical"),
        (models.GaussianMixin, "gaussian"),
    )

    def _run_on_zeros(
        self, model: Any, role: str, width: int, action_width: Optional[int] = None, action_value: float = 0.0
    ) -> jax.Array:
        if not hasattr(model, "state_dict"):
            raise ValueError("the model has no parameters yet")
        inputs = {"states": jnp.zeros((2, width), jnp.float32)}
        if shapes := zero_state_shapes(model, 2):  # a recurrent model: one acting step from zero hidden states
            inputs["rnn"] = [jnp.zeros(shape, jnp.float32) for shape in shapes]
        if action_width is not None:
            inputs["taken_actions"] = jnp.full((2, action_width), action_value, jnp.float32)
        return model.apply(model.state_dict.params, inputs, role)[0]


class OptimizerEntry:
    """The checkpoint entry of an optimizer that an agent owns as ``agent.<name>`` (see the module docstring).

    ``state`` reads the optimizer's optax state and assigning it rebinds ``agent.<name>`` to the optimizer with that
    state; ``replace(state=...)`` does the same and returns the entry (the ``flax.struct`` interface the loader uses).
    """

    def __init__(self, agent: Any, name: str) -> None:
        self._agent = agent
        self._name = name

    @property
    def state(self) -> Any:
        return getattr(self._agent, self._name).state

    @state.setter
    def state(self, state: Any) -> None:
        setattr(self._agent, self._name, getattr(self._agent, self._name).replace(state=state))

    def replace(self, state: Any) -> "OptimizerEntry":
        self.state = state
        return self
