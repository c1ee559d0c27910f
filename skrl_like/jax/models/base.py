"""The JAX ``Model`` base (a flax linen module) and its ``StateDict``.

A model holds no parameters inside the module: they live in ``model.state_dict.params`` so that every
computation is a pure function ``model.apply(params, inputs, role)`` that agents can ``jax.jit`` and
differentiate. The mixins (``GaussianMixin``, ...) turn the network output into actions and log-probabilities.
"""

import pickle
from collections.abc import Callable, Mapping
from typing import Any, Union

import flax
import flax.linen
import flax.serialization
import flax.struct
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like._logging import logger
from skrl_like.core.agents.checks import suggested_module
from skrl_like.core.random_actions import box_sampling
from skrl_like.core.spaces import compute_space_size
from skrl_like.jax.utils.distributed import compile_update, mean_over_processes

_REDUCTIONS = ("mean", "sum", "prod", "none")


class StateDict(flax.struct.PyTreeNode):
    """The parameters of a model together with the function that uses them.

    :param apply_fn: the model's ``apply`` (static: not a pytree leaf, so it never gets traced).
    :param params: the flax variables dict (``{"params": ...}``), the only pytree node.
    """

    apply_fn: Callable = flax.struct.field(pytree_node=False)
    params: Any = flax.struct.field(pytree_node=True)

    @classmethod
    def create(cls, *, apply_fn: Callable, params: Any, **kwargs: Any) -> "StateDict":
        """Build a state dict (keyword-only, mirroring flax's ``TrainState.create``)."""
        return cls(apply_fn=apply_fn, params=params, **kwargs)


def _identity_hash(self: Any) -> int:
    return object.__hash__(self)


def _identity_eq(self: Any, other: Any) -> bool:
    return self is other


def _is_traced(*trees: Any) -> bool:
    """Whether any leaf is a JAX tracer, i.e. the caller is inside ``jax.jit``/``grad``/``vmap``."""
    return any(isinstance(leaf, jax.core.Tracer) for tree in trees for leaf in jax.tree_util.tree_leaves(tree))


def reduce_last_axis(values: jax.Array, reduction: str) -> jax.Array:
    """Reduce per-dimension log-probabilities over the last axis (``"none"`` keeps them)."""
    if reduction == "mean":
        return jnp.mean(values, axis=-1)
    if reduction == "sum":
        return jnp.sum(values, axis=-1)
    if reduction == "prod":
        return jnp.prod(values, axis=-1)
    return values


def nan_like(x: jax.Array) -> jax.Array:
    """An array of NaN shaped like ``x``, computed from ``x`` (the discrete mixins' ``outputs["stddev"]``).

    Not ``jnp.full_like(x, nan)``: a constant output of a jitted function is a node with no inputs, which XLA's
    CPU executor runs on another thread, and the hand-off cost about 70 us per call on a 2-core machine.
    """
    return x + jnp.nan


def check_reduction(reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(map(repr, _REDUCTIONS))}, got {reduction!r}")
    return reduction


def _sample_flat(space: Any) -> np.ndarray | None:
    """One random sample of ``space``, flattened to a batch of one row (the layout agents feed models)."""
    if space is None:
        return None
    if not isinstance(space, gymnasium.Space):
        # an int or a shape: only the size is known, zeros are as good as any sample to trace the network
        return np.zeros((1, compute_space_size(space)), dtype=np.float32)
    sample = gymnasium.vector.utils.batch_space(space, 1).sample()

    def flatten(value: Any) -> np.ndarray:
        if isinstance(value, dict):
            return np.concatenate([flatten(value[name]) for name in sorted(value.keys())], axis=-1)
        if isinstance(value, (tuple, list)):
            return np.concatenate([flatten(item) for item in value], axis=-1)
        value = np.asarray(value)
        if np.issubdtype(value.dtype, np.integer):
            value = value.astype(np.int32)  # memories and wrappers store discrete values as int32
        return value.reshape(1, -1)

    return flatten(sample)


def restore_tree(target: Any, data: Any) -> Any:
    """Deserialize flax bytes written from a pytree like ``target`` (``flax.serialization.to_bytes``).

    :raises ValueError: ``data`` is not flax-serialized bytes, or naming every entry whose key, shape or dtype
        differs from ``target`` (``from_bytes`` alone would accept other shapes and dtypes silently).
    """
    try:
        saved = flax.serialization.msgpack_restore(data)
    except Exception as error:
        raise ValueError(f"not flax-serialized bytes ({type(error).__name__}: {error})") from error
    problems = _tree_mismatches(flax.serialization.to_state_dict(target), saved, "")
    if problems:
        raise ValueError("; ".join(problems))
    return flax.serialization.from_state_dict(target, saved)


def _tree_mismatches(expected: Any, found: Any, path: str) -> list[str]:
    if isinstance(expected, dict) or isinstance(found, dict):
        if not (isinstance(expected, dict) and isinstance(found, dict)):
            return [f"{path or '/'}: a {type(found).__name__} in the checkpoint, a {type(expected).__name__} here"]
        problems = []
        missing = [f"{path}/{key}" for key in expected if key not in found]
        unexpected = [f"{path}/{key}" for key in found if key not in expected]
        if missing:
            problems.append(f"missing {missing}")
        if unexpected:
            problems.append(f"unexpected {unexpected}")
        for key in expected:
            if key in found:
                problems.extend(_tree_mismatches(expected[key], found[key], f"{path}/{key}"))
        return problems
    if expected is None or found is None:
        return [] if expected is found else [f"{path}: {found!r} in the checkpoint, {expected!r} here"]
    shape, dtype = np.shape(expected), getattr(expected, "dtype", None) or np.asarray(expected).dtype
    found_shape, found_dtype = np.shape(found), getattr(found, "dtype", None) or np.asarray(found).dtype
    if found_shape != shape:
        return [f"{path}: shape {found_shape} in the checkpoint, {shape} here"]
    if np.dtype(found_dtype) != np.dtype(dtype):
        return [f"{path}: dtype {np.dtype(found_dtype)} in the checkpoint, {np.dtype(dtype)} here"]
    return []


@jax.jit
def _polyak(target: Any, source: Any, polyak: jax.Array) -> Any:
    return jax.tree_util.tree_map(lambda old, new: polyak * new + (1 - polyak) * old, target, source)


def _agent_checkpoint_modules(data: bytes) -> dict | None:
    """The ``{name: bytes}`` of an agent checkpoint (a pickled dict, ``Agent.save``), or ``None`` for other data.

    Only data that starts like a pickle (protocol 2 or later) is unpickled; flax's msgpack never starts so, except
    for an empty dict (``0x80`` alone), which no pickle is.
    """
    if not data.startswith(b"\x80") or len(data) < 2:
        return None
    try:
        payload = pickle.loads(data)
    except Exception:
        return None
    return payload if isinstance(payload, dict) else None


_mean_over_processes: Any = None  # Model.reduce_parameters' compiled collective, made at its first call


class Model(flax.linen.Module):
    """Base class of every JAX model: spaces, device, parameter storage and utilities.

    Subclass it together with a mixin (mixin first) and implement ``__call__(self, inputs, role)`` with flax.

    :param observation_space: observation space (gymnasium space, int or shape); sets ``num_observations``.
    :param action_space: action space (gymnasium space, int or shape); sets ``num_actions`` and the clipping bounds.
    :param device: where parameters are created (``jax.Device`` or ``"cpu"``/``"cuda:0"``); default
        ``config.jax.device`` resolution.
    :param parent: flax-reserved; leave ``None`` so the model is a top-level (unbound) module.
    :param name: flax-reserved module name.
    """

    observation_space: Any
    action_space: Any
    device: Any = None

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Union[str, jax.Device] | None = None,
        parent: Any | None = None,
        name: str | None = None,
    ) -> None:
        self._jax = config.jax.backend == "jax"
        self.device = config.jax.parse_device(device)
        self.observation_space = observation_space
        self.action_space = action_space
        self.num_observations = None if observation_space is None else compute_space_size(observation_space)
        self.num_actions = None if action_space is None else compute_space_size(action_space)
        self.training = False
        self.parent = parent
        self.name = name
        # a per-model random stream, so that eager ``act`` calls without an explicit key are reproducible. The
        # configured key is captured now but kept raw (a NumPy seed pair until first use): flax re-runs __init__
        # inside jitted ``apply`` calls, where creating a JAX key would leak a tracer into the config
        self._key = config.jax._key
        self._key_counter = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # a subclass that adds no dataclass fields and no __init__ (e.g. a variant overriding __call__) must keep
        # the parent's constructor: flax would generate one that skips Model.__init__ (no num_actions, no mixin)
        inherit_init = "__init__" not in cls.__dict__ and not cls.__dict__.get("__annotations__")
        super().__init_subclass__(**kwargs)
        if inherit_init:
            del cls.__init__
        # flax hashes modules by their fields, but gymnasium spaces are unhashable; identity semantics let a
        # model (or the bound ``apply`` inside its StateDict) be a static argument of ``jax.jit``
        cls.__hash__ = _identity_hash
        cls.__eq__ = _identity_eq

    def __call__(self, inputs: Mapping[str, Any], role: str = "") -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(self, inputs, role) with flax")

    # ---------------------------------------------------------------- randomness

    def _with_key(self, inputs: Mapping[str, Any], params: Any) -> tuple[dict, jax.Array]:
        """Return a copy of ``inputs`` holding a PRNG key, and that key.

        A key already in ``inputs`` is used as is (the pure path for jitted code). Otherwise the next key of
        the model's own stream is drawn, which is only meaningful eagerly: inside a trace it would be frozen
        into the compiled function, so that case is refused.
        """
        key = inputs.get("key")
        if key is not None:
            return dict(inputs), key
        if _is_traced(params, inputs.get("states"), inputs.get("taken_actions")):
            raise ValueError(
                f"{type(self).__name__}.act is being traced (jax.jit/grad) without a PRNG key: pass "
                "inputs['key'] (e.g. a split of the agent's key) so each compiled call draws fresh noise"
            )
        self._key_counter += 1
        with jax.default_device(self.device):
            if isinstance(self._key, np.ndarray):  # same conversion as config.jax.key
                self._key = jax.random.PRNGKey(int(self._key[1]))
            key = jax.random.fold_in(self._key, self._key_counter)
        return {**inputs, "key": key}, key

    def _forward(self, params: Any, inputs: Mapping[str, Any], role: str) -> Any:
        """``apply`` the network: inline when traced (the caller's jit compiles it), else through a jitted
        ``apply`` cached on the model, so that eager ``act`` calls cost one dispatch instead of one per op."""
        params = self._params(params)
        jitted = self.__dict__.get("_jitted_apply")
        if jitted is False or _is_traced(params, inputs):
            return self.apply(params, inputs, role)
        if jitted is None:
            jitted = jax.jit(self.apply, static_argnums=2)
            object.__setattr__(self, "_jitted_apply", jitted)
        try:
            return jitted(params, inputs, role)
        except TypeError:
            # not traceable (Python control flow on values, non-array outputs such as strings): stay eager
            object.__setattr__(self, "_jitted_apply", False)
            return self.apply(params, inputs, role)

    def _params(self, params: Any) -> Any:
        if params is not None:
            return params
        if not hasattr(self, "state_dict"):
            raise RuntimeError(
                f"{type(self).__name__} has no parameters yet: call model.init_state_dict(role) before using it"
            )
        return self.state_dict.params

    # ---------------------------------------------------------------- acting

    def act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[Any, Any, dict]:
        logger.warning("Make sure to place Mixins before Model during model definition")
        raise NotImplementedError("The action to be taken by the agent is provided by a mixin (e.g. GaussianMixin)")

    def random_act(self, inputs: Mapping[str, Any], role: str = "", params: Any = None) -> tuple[Any, None, dict]:
        """Random actions with NumPy's global RNG (seeded by ``set_seed``): always finite and inside the space.

        ``Discrete``: uniform over the actions. ``Box``: each dimension from its own bounds, uniform where both
        are finite, standard normal where both are infinite, ``low + e`` / ``high - e`` with ``e ~ Exponential(1)``
        where only one is (the rule of :mod:`skrl_like.core.random_actions`, the same in both backends).
        """
        batch_size = np.shape(inputs["states"])[0]
        if isinstance(self.action_space, gymnasium.spaces.Discrete):
            actions = np.random.randint(self.action_space.n, size=(batch_size, 1))
        elif isinstance(self.action_space, gymnasium.spaces.Box):
            box = self.__dict__.get("_random_box")
            if box is None:
                box = box_sampling(self.action_space)
                object.__setattr__(self, "_random_box", box)
            shape = (batch_size, self.num_actions)
            uniform = np.random.random_sample(shape).astype(np.float32)
            actions = (1 - uniform) * box.low + uniform * box.high
            if box.any_exponential:
                exponential = np.random.standard_exponential(shape).astype(np.float32)
                actions = np.where(box.is_uniform, actions, box.origin + box.direction * exponential)
            if box.any_normal:
                actions = np.where(box.is_normal, np.random.standard_normal(shape).astype(np.float32), actions)
            actions = np.clip(actions, box.space_low, box.space_high)
        else:
            raise NotImplementedError(f"random_act does not support the action space {self.action_space!r}")
        if self._jax:
            actions = jax.device_put(actions, self.device)
        return actions, None, {}

    # ---------------------------------------------------------------- parameters

    def init_state_dict(self, role: str, inputs: Mapping[str, Any] = {}, key: jax.Array | None = None) -> None:
        """Create ``self.state_dict`` by tracing the network once on sample inputs.

        :param role: the role passed to ``__call__`` while tracing.
        :param inputs: example inputs; by default one flattened sample of the observation and action spaces.
        :param key: PRNG key for the initial parameters; by default a key of its own, ``config.jax.model_key()`` (the
            root key folded with the number of models initialised so far), so that no two models start equal.
        """
        if key is None:
            key = config.jax.model_key()
        with jax.default_device(self.device):
            params = self.initial_params(role, key, inputs)
        self.state_dict = StateDict.create(apply_fn=self.apply, params=params)

    def initial_params(self, role: str, key: jax.Array, inputs: Mapping[str, Any] = {}) -> Any:
        """The network's initial parameters drawn from ``key`` (pure: ``CompiledTrainer`` draws one set per seed).

        :param role: the role passed to ``__call__`` while tracing.
        :param key: PRNG key for the parameters.
        :param inputs: example inputs; by default one flattened sample of the observation and action spaces (and,
            for a recurrent model, zero hidden states of its ``get_specification()`` sizes for the sample's rows).
        """
        if not inputs:
            inputs = {"states": _sample_flat(self.observation_space), "taken_actions": _sample_flat(self.action_space)}
        inputs = dict(inputs)
        if isinstance(inputs.get("states"), (int, np.integer)):
            inputs["states"] = np.array(inputs["states"]).reshape(1, 1)
        recurrent = self.get_specification().get("rnn")
        if recurrent and "rnn" not in inputs:  # a recurrent model traces with zero hidden states for the sample's rows
            rows = np.shape(inputs["states"])[0] if np.ndim(inputs.get("states")) >= 2 else 1
            inputs["rnn"] = [np.zeros((size[0], rows, *size[2:]), np.float32) for size in recurrent["sizes"]]
        return self.init(key, inputs, role)

    def _map_leaves(self, method_name: str, args: tuple, kwargs: dict, select: Callable[[str], bool]) -> None:
        """Re-initialise the selected parameter leaves with ``flax.linen.initializers.<method_name>``."""
        name = method_name.rstrip("_")  # accept torch-style names ("orthogonal_", "constant_")
        factory = getattr(flax.linen.initializers, name, None)
        if factory is None:
            raise ValueError(f"Unknown initializer {method_name!r}: use a name from flax.linen.initializers")
        if name in ("ones", "zeros"):  # these are initializers themselves, not factories
            initializer = factory
        else:
            try:
                initializer = factory(*args, **kwargs)
            except TypeError as error:
                raise ValueError(f"Initializer {name!r} needs arguments ({error}), e.g. ('constant', 0.0)") from error
        # a key of its own for every leaf, and new keys at every call (skrl 1.4.3 drew every leaf from the one
        # config.jax.key: each layer's biases equal, every kernel starting with the same numbers as the others)
        model_key = config.jax.model_key()
        leaves, treedef = jax.tree_util.tree_flatten_with_path(self._params(None))

        def initialise(index: int, path: tuple, leaf: jax.Array) -> jax.Array:
            last = path[-1]
            leaf_name = str(getattr(last, "key", getattr(last, "name", last)))
            if not select(leaf_name):
                return leaf
            return initializer(jax.random.fold_in(model_key, index), leaf.shape, leaf.dtype)

        with jax.default_device(self.device):
            new_leaves = [initialise(index, path, leaf) for index, (path, leaf) in enumerate(leaves)]
            params = jax.tree_util.tree_unflatten(treedef, new_leaves)
        self.state_dict = self.state_dict.replace(params=params)

    def init_parameters(self, method_name: str = "normal", *args: Any, **kwargs: Any) -> None:
        """Re-initialise every parameter with ``flax.linen.initializers.<method_name>(*args, **kwargs)``."""
        self._map_leaves(method_name, args, kwargs, lambda name: True)

    def init_weights(self, method_name: str = "normal", *args: Any, **kwargs: Any) -> None:
        """Re-initialise the ``kernel`` leaves (weights of dense and convolution layers)."""
        self._map_leaves(method_name, args, kwargs, lambda name: name == "kernel")

    def init_biases(self, method_name: str = "constant_", *args: Any, **kwargs: Any) -> None:
        """Re-initialise the ``bias`` leaves (e.g. ``init_biases("constant", 0.0)``)."""
        self._map_leaves(method_name, args, kwargs, lambda name: name == "bias")

    def get_specification(self) -> dict:
        """Extra information agents need (recurrent models return their ``{"rnn": ...}`` layout); ``{}`` here."""
        return {}

    def set_mode(self, mode: str) -> None:
        """``"train"`` or ``"eval"``; sets ``self.training`` for user code that behaves differently."""
        if mode not in ("train", "eval"):
            raise ValueError(f"Invalid mode {mode!r}: use 'train' or 'eval'")
        self.training = mode == "train"

    def save(self, path: str, state_dict: StateDict | None = None) -> None:
        """Write the parameters (of ``state_dict`` if given) as flax-serialized bytes."""
        params = self._params(None) if state_dict is None else state_dict.params
        with open(path, "wb") as file:
            file.write(flax.serialization.to_bytes(params))

    def _fits(self, data: Any) -> bool:
        """Whether a module's bytes in an agent checkpoint would load into this model's parameters."""
        try:
            restore_tree(self._params(None), data)
        except Exception:
            return False
        return True

    def load(self, path: str, module: str | None = None) -> None:
        """Read parameters written by ``save`` into the existing state dict and switch to eval mode.

        Nothing changes unless every entry of the file matches the model (keys, shapes, dtypes).

        :param path: file to read.
        :param module: read this module (e.g. ``"policy"``) of an agent checkpoint (a file written by
            ``Agent.save`` or a trainer) instead of a file written by :meth:`save`.
        :raises ValueError: the file is not a checkpoint, is an agent checkpoint and ``module`` is not given (or
            names no module of it), or does not match this model.
        """
        with open(path, "rb") as file:
            data = file.read()
        modules = _agent_checkpoint_modules(data)
        if modules is not None:
            names = sorted(modules, key=str)
            if module is None:
                fitting = [name for name in names if self._fits(modules[name])]
                raise ValueError(
                    f"'{path}' is an agent checkpoint with modules {names}: load it with agent.load(path), or pass "
                    f"the module to read into this model: {suggested_module(fitting, names)}"
                )
            if module not in modules:
                raise ValueError(f"Agent checkpoint '{path}' has no module {module!r}: its modules are {names}")
            data = modules[module]
        elif module is not None:
            raise ValueError(
                f"'{path}' is not an agent checkpoint (Agent.save) but one model's parameters (Model.save) or "
                "another file: load it without module="
            )
        try:
            flax.serialization.msgpack_restore(data)
        except Exception as error:
            raise ValueError(
                f"'{path}' could not be read as a model checkpoint ({type(error).__name__}: {error}): the file is "
                "corrupt or was not written by Model.save / Agent.save"
            ) from error
        try:
            params = restore_tree(self._params(None), data)
        except ValueError as error:
            raise ValueError(
                f"'{path}' does not match this {type(self).__name__} ({error}); nothing was loaded: build the model "
                "with the architecture that saved it"
            ) from error
        self.state_dict = self.state_dict.replace(params=params)
        self.set_mode("eval")

    def migrate(self, *args: Any, **kwargs: Any) -> bool:
        raise NotImplementedError("Model.migrate is not available for JAX models")

    def freeze_parameters(self, freeze: bool = True) -> None:
        """No-op: JAX parameters are frozen simply by not stepping an optimizer on them."""

    def update_parameters(self, model: "Model", polyak: float = 1) -> None:
        """Copy (``polyak == 1``) or blend ``polyak * source + (1 - polyak) * target`` the other model's params."""
        if polyak == 1:
            self.state_dict = self.state_dict.replace(params=model.state_dict.params)
        else:
            params = _polyak(self.state_dict.params, model.state_dict.params, jnp.float32(polyak))
            self.state_dict = self.state_dict.replace(params=params)

    def broadcast_parameters(self, rank: int = 0) -> None:
        """Replace the parameters by those of process ``rank`` (distributed runs only)."""
        if not config.jax.is_distributed:
            return
        from jax.experimental import multihost_utils

        params = multihost_utils.broadcast_one_to_all(self.state_dict.params, is_source=jax.process_index() == rank)
        self.state_dict = self.state_dict.replace(params=params)

    def reduce_parameters(self, tree: Any) -> Any:
        """Average a pytree (usually gradients) over processes; unchanged in a single-process run.

        A host-side call (one small compiled collective); inside a compiled update use
        :func:`skrl_like.jax.utils.distributed.mean_over_processes` (the agents' optimizer update does).
        """
        if not config.jax.is_distributed:
            return tree
        global _mean_over_processes
        if _mean_over_processes is None:
            _mean_over_processes = compile_update(mean_over_processes, data_argnums=(0,))
        return _mean_over_processes(tree)
