"""The torch ``Model`` base: spaces, device and the utilities every function approximator shares.

A concrete model combines a mixin (which turns the raw network output into actions and log-probabilities)
with this class (``class Policy(GaussianMixin, Model)``) and implements only ``compute``.
"""

import io
import zipfile
from typing import Any, Callable, Mapping, Sequence, Union

import gymnasium
import numpy as np
import torch

from skrl_like import config, logger
from skrl_like.core.agents.checks import suggested_module
from skrl_like.core.random_actions import BoxSampling, box_sampling
from skrl_like.core.spaces import compute_space_size
from skrl_like.torch.utils.distributed import average_gradients

# per-mixin caches of the last act call (see each mixin)
_ACT_CACHES = ("_g_last", "_mg_last", "_c_last", "_mc_last")

SpaceLike = Union[int, Sequence[int], gymnasium.Space, None]
ActOutput = tuple[torch.Tensor, torch.Tensor | None, dict]


def _init_function(method_name: str) -> Callable[..., Any]:
    function = getattr(torch.nn.init, method_name, None)
    if not callable(function):
        raise AttributeError(
            f"Unknown initialisation method {method_name!r}: use the name of a torch.nn.init function "
            "such as 'normal_', 'orthogonal_', 'xavier_uniform_' or 'constant_'"
        )
    return function


def _linear_layers(modules: Any) -> list[torch.nn.Linear]:
    # only direct Linear children and Linear layers nested in Sequential children count (skrl's traversal)
    found = []
    for module in modules:
        if isinstance(module, torch.nn.Sequential):
            found.extend(_linear_layers(module))
        elif isinstance(module, torch.nn.Linear):
            found.append(module)
    return found


def _mixins_after_model(cls: type) -> list[str]:
    mro = cls.__mro__
    start = mro.index(Model) + 1
    return [klass.__name__ for klass in mro[start:] if "act" in vars(klass)]


def require_model_initialised(model: Any, mixin_name: str) -> None:
    """Raise a clear error when a mixin is initialised before ``Model.__init__`` ran.

    :param model: the model whose mixin is being initialised.
    :param mixin_name: the mixin's class name, for the message.
    """
    if "_parameters" not in vars(model) or not hasattr(model, "device"):
        raise RuntimeError(
            f"{mixin_name}.__init__ was called before Model.__init__ in {type(model).__name__}: "
            f"call Model.__init__(self, observation_space, action_space, device) first"
        )


def bad_compute_output(model: Any, mixin_name: str, role: str, result: Any, expected: str) -> ValueError:
    """Build the error raised when ``compute`` returns the wrong number of values.

    :param model: the model whose ``compute`` misbehaved.
    :param mixin_name: the mixin that called ``compute``.
    :param role: the role passed to ``compute``.
    :param result: what ``compute`` returned.
    :param expected: the tuple the mixin expects, spelled out for the message.
    """
    count = len(result) if isinstance(result, (tuple, list)) else f"a {type(result).__name__}"
    hint = ""
    if sum(1 for klass in type(model).__mro__ if "act" in vars(klass) and klass.__name__.endswith("Mixin")) > 1:
        hint = "; a model with two mixins must override act(inputs, role) to dispatch each role to its mixin"
    return ValueError(
        f"{type(model).__name__}.compute(inputs, role={role!r}) returned {count} value(s) but {mixin_name} "
        f"expects {expected}{hint}"
    )


def register_action_bounds(model: Any, prefix: str, clip_actions: bool) -> bool:
    """Store the action-space bounds as non-persistent buffers ``<prefix>clip_actions_min``/``_max``.

    Buffers follow ``model.to(device)`` and stay out of the state dict (checkpoints keep skrl's keys).

    :param model: the model being initialised.
    :param prefix: the mixin's private attribute prefix (``"_g_"``, ``"_d_"``...).
    :param clip_actions: whether the user asked for clipping.
    :return: whether clipping is effective (requested and the action space is a bounded gymnasium space).
    """
    space = model.action_space
    effective = bool(clip_actions) and isinstance(space, gymnasium.Space) and hasattr(space, "low")
    # flat, as the actions are (batch, num_actions) whatever the space's shape
    low = torch.tensor(space.low.reshape(-1), device=model.device, dtype=torch.float32) if effective else None
    high = torch.tensor(space.high.reshape(-1), device=model.device, dtype=torch.float32) if effective else None
    model.register_buffer(f"{prefix}clip_actions_min", low, persistent=False)
    model.register_buffer(f"{prefix}clip_actions_max", high, persistent=False)
    return effective


def reduction_function(reduction: str) -> Callable[..., torch.Tensor] | None:
    """Map a ``reduction`` name to the torch function that reduces log-probabilities over the last axis.

    :param reduction: ``"mean"``, ``"sum"``, ``"prod"`` or ``"none"`` (keep one log-probability per component).
    """
    functions = {"mean": torch.mean, "sum": torch.sum, "prod": torch.prod, "none": None}
    if reduction not in functions:
        raise ValueError(f"reduction must be one of 'mean', 'sum', 'prod' or 'none', got {reduction!r}")
    return functions[reduction]


def state_dict_mismatches(module: torch.nn.Module, state: Any) -> list[str]:
    """What keeps ``state`` from loading into ``module`` as is: missing or unexpected keys, tensors of another shape
    or dtype (``load_state_dict`` would copy the matching tensors before raising, or cast silently). Empty: it fits.
    """
    if not isinstance(state, Mapping):
        return [f"the checkpoint holds a {type(state).__name__}, not a state dict"]
    expected = module.state_dict()
    problems = []
    missing = [key for key in expected if key not in state]
    unexpected = [key for key in state if key not in expected]
    if missing:
        problems.append(f"missing {missing}")
    if unexpected:
        problems.append(f"unexpected {unexpected}")
    for key, tensor in expected.items():
        found = state.get(key)
        if key not in state or not isinstance(tensor, torch.Tensor) or torch.nn.parameter.is_lazy(tensor):
            continue  # a lazy parameter takes the checkpoint's shape
        if not isinstance(found, torch.Tensor):
            problems.append(f"{key}: a {type(found).__name__} in the checkpoint, a tensor here")
        elif found.shape != tensor.shape:
            problems.append(f"{key}: shape {tuple(found.shape)} in the checkpoint, {tuple(tensor.shape)} here")
        elif found.dtype != tensor.dtype:
            problems.append(f"{key}: dtype {found.dtype} in the checkpoint, {tensor.dtype} here")
    return problems


def is_agent_checkpoint(state: Any) -> bool:
    """Whether a loaded file is an agent's modules (``Agent.save``: ``{name: state dict}``), not one state dict."""
    return (
        isinstance(state, Mapping)
        and any(isinstance(value, Mapping) for value in state.values())
        and not any(isinstance(value, torch.Tensor) for value in state.values())
    )


class Model(torch.nn.Module):
    """Base class of every torch model: holds the spaces, the device and shared utilities.

    :param observation_space: observation space or shape; sets ``num_observations`` (its one-hot size for
        discrete spaces) so that the network can be sized from it.
    :param action_space: action space or shape; sets ``num_actions`` the same way, and gives the bounds used
        by ``clip_actions`` and ``random_act``.
    :param device: where parameters and generated tensors live (``None``: CUDA if available, else CPU).
    """

    def __init__(self, observation_space: SpaceLike, action_space: SpaceLike, device: Any = None) -> None:
        super().__init__()
        self.device = config.torch.parse_device(device)
        self.observation_space = observation_space
        self.action_space = action_space
        self.num_observations = None if observation_space is None else compute_space_size(observation_space)
        self.num_actions = None if action_space is None else compute_space_size(action_space)
        self._random_box: BoxSampling | None = None  # the Box sampling arrays as tensors, built on first use

    # --- to be provided by the user / the mixins -----------------------------------------------------------

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        """The network computation (user-implemented); see the mixin for the tuple it must return.

        :param inputs: ``{"states": ..., "taken_actions": ..., ...}``.
        :param role: which part of the agent is calling (``"policy"``, ``"value"``, ...).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement compute(inputs, role)")

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Provided by the mixins; reaching this method means no mixin precedes ``Model`` in the bases.

        :param inputs: model inputs.
        :param role: calling role.
        """
        misplaced = _mixins_after_model(type(self))
        where = f" ({', '.join(misplaced)} comes after Model)" if misplaced else ""
        message = (
            f"{type(self).__name__} has no act method{where}: place the mixins before Model in the class bases, "
            f"e.g. class {type(self).__name__}(GaussianMixin, Model)"
        )
        logger.warning(message)
        raise NotImplementedError(message)

    def __getstate__(self) -> dict:
        # drop the tensors cached by the mixins' last act: they may belong to an autograd graph, which
        # copy.deepcopy and pickle refuse, and they are meaningless in a copy anyway
        state = super().__getstate__()
        for key in _ACT_CACHES:
            if key in state:
                state[key] = {}
        if "_shared_output" in state:  # trunk outputs cached by a shared model between its two roles
            state["_shared_output"] = None
        return state

    def forward(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Same as :meth:`act`, so that ``model(inputs, role)`` works.

        :param inputs: model inputs.
        :param role: calling role.
        """
        return self.act(inputs, role)

    # --- exploration and initialisation --------------------------------------------------------------------

    def random_act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Random actions, used by agents during their ``random_timesteps``: always finite and inside the space.

        ``Discrete``: uniform over the actions. ``Box``: each dimension from its own bounds, uniform where both
        are finite, standard normal where both are infinite, ``low + e`` / ``high - e`` with ``e ~ Exponential(1)``
        where only one is (the rule of :mod:`skrl_like.core.random_actions`, the same in both backends).

        :param inputs: model inputs; only the batch size of ``inputs["states"]`` is used.
        :param role: calling role (unused).
        """
        batch = inputs["states"].shape[0]
        space = self.action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            return torch.randint(int(space.n), (batch, 1), device=self.device), None, {}
        if isinstance(space, gymnasium.spaces.Box):
            if self._random_box is None:
                arrays = box_sampling(space)
                self._random_box = arrays._replace(
                    **{
                        name: torch.as_tensor(value, device=self.device)
                        for name, value in arrays._asdict().items()
                        if isinstance(value, np.ndarray)
                    }
                )
            box = self._random_box
            shape = (batch, self.num_actions)
            uniform = torch.rand(shape, device=self.device)
            actions = (1 - uniform) * box.low + uniform * box.high
            if box.any_exponential:
                exponential = torch.empty(shape, device=self.device).exponential_()
                actions = torch.where(box.is_uniform, actions, box.origin + box.direction * exponential)
            if box.any_normal:
                actions = torch.where(box.is_normal, torch.randn(shape, device=self.device), actions)
            return torch.clamp(actions, box.space_low, box.space_high), None, {}
        raise NotImplementedError(
            f"random_act supports Discrete and Box action spaces, not {type(space).__name__}: "
            "set the agent's random_timesteps to 0 or override random_act"
        )

    def init_state_dict(self, role: str = "", inputs: Mapping[str, Any] = {}) -> None:
        """Run the network once so that lazy layers (``nn.LazyLinear``...) get their shapes.

        Call it before building the agent: the optimizer must see materialised parameters. A recurrent model takes one
        acting step from zero hidden states of its ``get_specification()`` sizes.

        :param role: role passed to ``compute``.
        :param inputs: example inputs; by default one random sample of the observation and action spaces.
        """
        from skrl_like.torch.utils.spaces import flatten_tensorized_space, sample_space

        if not inputs:
            inputs = {
                "states": flatten_tensorized_space(
                    sample_space(self.observation_space, batch_size=1, backend="native", device=self.device)
                ),
                "taken_actions": flatten_tensorized_space(
                    sample_space(self.action_space, batch_size=1, backend="native", device=self.device)
                ),
            }
            # wrappers deliver Box observations as float32, whatever the space's dtype
            inputs = {
                key: value.float() if isinstance(value, torch.Tensor) and value.is_floating_point() else value
                for key, value in inputs.items()
            }
        self.to(self.device)
        recurrent = self.get_specification().get("rnn")
        training = self.training
        if recurrent and "rnn" not in inputs:  # one acting step from zero hidden states for the sample's rows
            rows = inputs["states"].shape[0]
            zeros = [torch.zeros(size[0], rows, *size[2:], device=self.device) for size in recurrent["sizes"]]
            inputs = {**inputs, "rnn": zeros}
            self.train(False)
        with torch.no_grad():
            self.compute(inputs, role)
        self.train(training)

    def init_parameters(self, method_name: str = "normal_", *args: Any, **kwargs: Any) -> None:
        """Initialise every parameter with ``torch.nn.init.<method_name>(parameter, *args, **kwargs)``.

        :param method_name: name of a ``torch.nn.init`` function.
        """
        function = _init_function(method_name)
        for parameter in self.parameters():
            function(parameter, *args, **kwargs)

    def init_weights(self, method_name: str = "orthogonal_", *args: Any, **kwargs: Any) -> None:
        """Initialise the weights of the ``nn.Linear`` children (direct or nested in ``nn.Sequential``).

        :param method_name: name of a ``torch.nn.init`` function.
        """
        function = _init_function(method_name)
        for layer in _linear_layers(self.children()):
            function(layer.weight, *args, **kwargs)

    def init_biases(self, method_name: str = "constant_", *args: Any, **kwargs: Any) -> None:
        """Initialise the biases of the same layers as :meth:`init_weights`.

        :param method_name: name of a ``torch.nn.init`` function.
        """
        function = _init_function(method_name)
        for layer in _linear_layers(self.children()):
            if layer.bias is not None:
                function(layer.bias, *args, **kwargs)

    def get_specification(self) -> dict:
        """Extra information agents need (recurrent models return their ``{"rnn": ...}`` layout)."""
        return {}

    def tensor_to_space(self, tensor: torch.Tensor, space: gymnasium.Space, start: int = 0) -> Any:
        """Deprecated: use ``skrl_like.torch.utils.spaces.unflatten_tensorized_space(space, tensor)``.

        :param tensor: flat tensor.
        :param space: space giving the layout.
        :param start: ignored (kept for signature compatibility).
        """
        from skrl_like.torch.utils.spaces import unflatten_tensorized_space

        logger.warning("Model.tensor_to_space is deprecated: use unflatten_tensorized_space(space, tensor)")
        return unflatten_tensorized_space(space, tensor)

    def set_mode(self, mode: str) -> None:
        """Switch between training and evaluation behaviour (dropout, batch norm, recurrent layout).

        :param mode: ``"train"`` or ``"eval"``.
        """
        if mode == "train":
            self.train(True)
        elif mode == "eval":
            self.train(False)
        else:
            raise ValueError(f"Invalid mode {mode!r}: use 'train' or 'eval'")

    # --- persistence ---------------------------------------------------------------------------------------

    def save(self, path: str, state_dict: Mapping[str, Any] | None = None) -> None:
        """Save the model's state dict (or the given one) with ``torch.save``.

        :param path: file to write.
        :param state_dict: state to save instead of the model's own.
        """
        torch.save(self.state_dict() if state_dict is None else state_dict, path)

    def load(self, path: str, module: str | None = None) -> None:
        """Load a state dict saved by :meth:`save` and switch to evaluation mode.

        Nothing changes unless every entry of the file matches the model (keys, shapes, dtypes).

        :param path: file to read.
        :param module: read this module (e.g. ``"policy"``) of an agent checkpoint (a file written by
            ``Agent.save`` or a trainer) instead of a file written by :meth:`save`.
        :raises ValueError: the file is not a checkpoint, is an agent checkpoint and ``module`` is not given (or
            names no module of it), or does not match this model.
        """
        state_dict = self._read_checkpoint(path, module)
        problems = state_dict_mismatches(self, state_dict)
        if problems:
            raise ValueError(
                f"'{path}' does not match this {type(self).__name__} ({'; '.join(problems)}); nothing was loaded: "
                "build the model with the architecture that saved it"
            )
        self.load_state_dict(state_dict)
        self.eval()

    def _fits(self, state: Any) -> bool:
        """Whether a module state of an agent checkpoint would load into this model."""
        try:
            return isinstance(state, Mapping) and not state_dict_mismatches(self, state)
        except Exception:
            return False

    def _read_checkpoint(self, path: str, module: str | None) -> Any:
        """The state in ``path``: a file of :meth:`save`, or module ``module`` of an agent checkpoint."""
        try:
            state_dict = torch.load(path, map_location=self.device, weights_only=False)
        except FileNotFoundError:
            raise
        except Exception as error:
            raise ValueError(
                f"'{path}' could not be read as a model checkpoint ({type(error).__name__}: {error}): the file is "
                "corrupt or was not written by Model.save / Agent.save"
            ) from error
        if is_agent_checkpoint(state_dict):
            modules = sorted(state_dict, key=str)
            if module is None:
                fitting = [name for name in modules if self._fits(state_dict[name])]
                raise ValueError(
                    f"'{path}' is an agent checkpoint with modules {modules}: load it with agent.load(path), or pass "
                    f"the module to read into this model: {suggested_module(fitting, modules)}"
                )
            if module not in state_dict:
                raise ValueError(f"Agent checkpoint '{path}' has no module {module!r}: its modules are {modules}")
            state_dict = state_dict[module]
        elif module is not None:
            raise ValueError(
                f"'{path}' is not an agent checkpoint but one model's state (Model.save): load it without module="
            )
        return state_dict

    def migrate(
        self,
        state_dict: Mapping[str, torch.Tensor] | None = None,
        path: str | None = None,
        name_map: Mapping[str, str] = {},
        auto_mapping: bool = True,
        verbose: bool = False,
    ) -> bool:
        """Import parameters from another library's state dict (rl_games ``.pt``/``.pth``, stable-baselines3 ``.zip``).

        :param state_dict: external state dict (give this or ``path``).
        :param path: checkpoint file (give this or ``state_dict``).
        :param name_map: ``{our name: external name}`` pairs that decide ambiguous matches.
        :param auto_mapping: also match remaining names by shape and ``.weight``/``.bias`` suffix.
        :param verbose: log both state dicts and every mapping decision.
        :return: ``True`` when every parameter found exactly one source used once.
        """
        if (state_dict is None) == (path is None):
            raise ValueError("Model.migrate needs exactly one of state_dict or path")
        if path is not None:
            state_dict = self._read_external_checkpoint(path)
        if verbose:
            logger.info("Model migration: external state dict")
            for name, tensor in state_dict.items():
                logger.info(f"  |-- {name} : {list(getattr(tensor, 'shape', []))}")
            logger.info("Model migration: current state dict")
            for name, tensor in self.state_dict().items():
                logger.info(f"  |-- {name} : {list(tensor.shape)}")

        def kind(name: str) -> str:
            return "weight" if name.endswith(".weight") else "bias" if name.endswith(".bias") else "other"

        new_state_dict = {}
        matches: dict[str, list[str]] = {}
        used: dict[str, int] = {}
        for name, tensor in self.state_dict().items():
            matches[name] = []
            for external_name, external in state_dict.items():
                external_shape = getattr(external, "shape", None)
                if name_map.get(name) == external_name:
                    if tensor.shape == external_shape:
                        new_state_dict[name] = external
                        matches[name] = [external_name]
                        if verbose:
                            logger.info(f"  |-- map:  {name} <- {external_name}")
                        break
                    logger.warning(
                        f"Shape mismatch for {name} <- {external_name}: {list(tensor.shape)} != {list(external_shape)}"
                    )
                if auto_mapping and name not in name_map and tensor.shape == external_shape:
                    if kind(name) == kind(external_name):
                        new_state_dict[name] = external
                        matches[name].append(external_name)
                        if verbose:
                            logger.info(f"  |-- auto: {name} <- {external_name}")
            for external_name in matches[name]:
                used[external_name] = used.get(external_name, 0) + 1

        status = True
        for name, found in matches.items():
            if len(found) > 1:
                logger.warning(f"Ambiguous match for {name} <- [{', '.join(found)}]: give it in name_map")
                status = False
            elif not found:
                logger.warning(f"Missing match for {name}")
                status = False
        for external_name, count in used.items():
            if count > 1:
                logger.warning(f"Multiple use of {external_name} ({count} parameters)")
                status = False
        self.load_state_dict(new_state_dict, strict=False)
        self.eval()
        return status

    def _read_external_checkpoint(self, path: str) -> Mapping[str, Any]:
        if path.endswith((".pt", ".pth")):
            checkpoint = torch.load(path, map_location=self.device, weights_only=False)
            return checkpoint.get("model", {}) if isinstance(checkpoint, dict) else {}
        if path.endswith(".zip"):
            with zipfile.ZipFile(path, "r") as archive:
                if "policy.pth" not in archive.namelist():
                    logger.warning(f"No 'policy.pth' member in {path}: nothing to migrate")
                    return {}
                with archive.open("policy.pth", "r") as member:
                    return torch.load(io.BytesIO(member.read()), map_location=self.device, weights_only=False)
        raise ValueError(f"Cannot migrate from {path!r}: use a .pt/.pth (rl_games) or .zip (stable-baselines3) file")

    # --- parameter sharing ---------------------------------------------------------------------------------

    def freeze_parameters(self, freeze: bool = True) -> None:
        """Stop (or restart) gradient tracking, e.g. for target networks.

        :param freeze: ``True`` to freeze.
        """
        for parameter in self.parameters():
            parameter.requires_grad = not freeze

    def update_parameters(self, model: torch.nn.Module, polyak: float = 1) -> None:
        """Copy (``polyak == 1``) or blend (``p <- (1 - polyak) p + polyak p_source``) another model's parameters.

        Used for target networks; parameters are paired in registration order, buffers are not touched.

        :param model: the source model (same architecture).
        :param polyak: blending factor in ``[0, 1]``.
        """
        targets = list(self.parameters())
        sources = list(model.parameters())
        if len(targets) != len(sources):
            raise ValueError(
                f"update_parameters: {type(self).__name__} has {len(targets)} parameters but the source "
                f"{type(model).__name__} has {len(sources)}; both models must have the same architecture"
            )
        with torch.no_grad():
            if polyak == 1:
                for target, source in zip(targets, sources):
                    target.copy_(source)
            elif targets:
                # lerp: target + polyak * (source - target), one fused kernel for all tensors
                torch._foreach_lerp_(targets, sources, float(polyak))

    def broadcast_parameters(self, rank: int = 0) -> None:
        """Send the state dict of process ``rank`` to every process (distributed runs).

        :param rank: source process.
        """
        objects = [self.state_dict()]
        torch.distributed.broadcast_object_list(objects, rank)
        self.load_state_dict(objects[0])

    def reduce_parameters(self) -> None:
        """Average the gradients over all processes (call after ``backward``, before the optimizer step); the agents'
        optimizer step does this for the parameters it steps."""
        average_gradients(list(self.parameters()))
