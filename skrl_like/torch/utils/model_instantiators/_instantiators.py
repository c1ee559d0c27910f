"""The public instantiator functions: a network definition in, a ready model (or its description) out."""

from collections.abc import Mapping, Sequence
from typing import Any

from skrl_like import logger
from skrl_like.torch.models import Model
from skrl_like.torch.utils.model_instantiators._models import (
    GAUSSIAN_TYPES,
    MIXIN_OPTIONS,
    MIXINS,
    CategoricalModel,
    DeterministicModel,
    GaussianModel,
    MultiCategoricalModel,
    MultivariateGaussianModel,
    shared_model_class,
)
from skrl_like.torch.utils.model_instantiators.common import (
    convert_deprecated_parameters,
    generate_containers,
    legacy_parameters,
    parse_output,
)


def _network_and_output(function: str, network: Any, output: Any, args: tuple, kwargs: Mapping[str, Any]) -> tuple:
    if args:
        logger.warning(f"{function}: extra positional arguments {args!r} are ignored")
    unknown = set(kwargs) - set(legacy_parameters())
    if unknown:
        raise TypeError(
            f"{function}() got unexpected keyword argument(s) {', '.join(sorted(unknown))}; besides its own "
            f"parameters it accepts only the legacy {', '.join(legacy_parameters())}"
        )
    if not network and kwargs:
        return convert_deprecated_parameters(kwargs)
    return network, output


def _describe(
    class_name: str,
    bases: Sequence[str],
    init_lines: Sequence[str],
    containers: Sequence[Any],
    extra_lines: Sequence[str],
    compute_lines: Sequence[str],
) -> str:
    """A readable, Python-like description of the model (skrl returned exec-able source; we never exec)."""
    lines = [
        f"class {class_name}({', '.join(bases)}, Model):",
        "    def __init__(self, observation_space, action_space, device):",
        "        Model.__init__(self, observation_space, action_space, device)",
    ]
    lines += [f"        {line}" for line in init_lines]
    lines.append("")
    for container in containers:
        lines.append(f"        self.{container.name}_container = nn.Sequential(")
        for layer in container.layers:
            lines += [f"            {text}," for text in layer.describe()]
        lines.append("        )")
    lines += [f"        {line}" for line in extra_lines]
    lines += [
        "",
        '    def compute(self, inputs, role=""):',
        '        states = unflatten_tensorized_space(self.observation_space, inputs.get("states"))',
        '        taken_actions = unflatten_tensorized_space(self.action_space, inputs.get("taken_actions"))',
    ]
    lines += [f"        {line}" for line in compute_lines]
    return "\n".join(lines) + "\n"


def _single_description(
    class_name: str, mixin: str, options: Mapping[str, Any], network: Any, output: Any, **spaces: Any
) -> str:
    containers, output_definition = generate_containers(network, output, embed_output=True, **spaces)
    forward = [f"{c.name} = self.{c.name}_container({c.input.text})" for c in containers]
    result = containers[-1].name
    if output_definition.expression is not None:
        forward.append(f"output = {output_definition.expression.text}")
        result = "output"
    extra = []
    if mixin in ("GaussianMixin", "MultivariateGaussianMixin"):
        size = {"ACTIONS": "self.num_actions", "ONE": "1"}[output_definition.size]
        extra.append(
            f"self.log_std_parameter = nn.Parameter(torch.full(size=({size},), "
            f"fill_value={float(options.pop('initial_log_std'))}), requires_grad={not options.pop('fixed_log_std')})"
        )
        forward.append(f"return {result}, self.log_std_parameter, {{}}")
    else:
        forward.append(f"return {result}, {{}}")
    arguments = ", ".join(f"{key}={value!r}" for key, value in options.items())
    init = [f'{mixin}.__init__(self, {arguments}, role="")']
    return _describe(class_name, [mixin], init, containers, extra, forward)


def gaussian_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    clip_actions: bool = False,
    clip_log_std: bool = True,
    min_log_std: float = -20,
    max_log_std: float = 2,
    reduction: str = "sum",
    initial_log_std: float = 0,
    fixed_log_std: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a Gaussian policy (``GaussianMixin`` + ``Model``) from a network definition.

    :param observation_space: observation space (sizes ``STATES`` tokens; gives ``states`` its structure).
    :param action_space: action space (sizes ``ACTIONS`` tokens; bounds for ``clip_actions``).
    :param device: where the model lives.
    :param clip_actions: clamp sampled actions to the action bounds.
    :param clip_log_std: clamp the log standard deviation to ``[min_log_std, max_log_std]``.
    :param min_log_std: lower log-std bound.
    :param max_log_std: upper log-std bound.
    :param reduction: log-probability reduction over action dimensions (``"sum"``, ``"mean"``, ``"prod"``, ``"none"``).
    :param initial_log_std: initial value of the state-independent ``log_std_parameter``.
    :param fixed_log_std: keep ``log_std_parameter`` out of training (``requires_grad=False``).
    :param network: list of containers ``{"name", "input", "layers", "activations"}``.
    :param output: output expression, e.g. ``"ACTIONS"`` or ``"2 * tanh(ACTIONS)"``.
    :param return_source: return a readable description of the model instead of the model.
    :param kwargs: legacy (pre-1.3) parameters ``input_shape``, ``hiddens``... used when ``network`` is empty.
    """
    network, output = _network_and_output("gaussian_model", network, output, args, kwargs)
    if return_source:
        options = dict(
            clip_actions=clip_actions, clip_log_std=clip_log_std, min_log_std=min_log_std, max_log_std=max_log_std,
            reduction=reduction, initial_log_std=initial_log_std, fixed_log_std=fixed_log_std,
        )  # fmt: skip
        return _single_description(
            "GaussianModel", "GaussianMixin", options, network, output,
            observation_space=observation_space, action_space=action_space,
        )  # fmt: skip
    return GaussianModel(
        observation_space, action_space, device, clip_actions, clip_log_std, min_log_std, max_log_std,
        reduction, initial_log_std, fixed_log_std, network, output,
    )  # fmt: skip


def multivariate_gaussian_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    clip_actions: bool = False,
    clip_log_std: bool = True,
    min_log_std: float = -20,
    max_log_std: float = 2,
    initial_log_std: float = 0,
    fixed_log_std: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a multivariate Gaussian policy (``MultivariateGaussianMixin`` + ``Model``) from a network definition.

    Parameters as :func:`gaussian_model` (there is no ``reduction``: the density is joint by construction).
    """
    network, output = _network_and_output("multivariate_gaussian_model", network, output, args, kwargs)
    if return_source:
        options = dict(
            clip_actions=clip_actions, clip_log_std=clip_log_std, min_log_std=min_log_std, max_log_std=max_log_std,
            initial_log_std=initial_log_std, fixed_log_std=fixed_log_std,
        )  # fmt: skip
        return _single_description(
            "MultivariateGaussianModel", "MultivariateGaussianMixin", options, network, output,
            observation_space=observation_space, action_space=action_space,
        )  # fmt: skip
    return MultivariateGaussianModel(
        observation_space, action_space, device, clip_actions, clip_log_std, min_log_std, max_log_std,
        initial_log_std, fixed_log_std, network, output,
    )  # fmt: skip


def deterministic_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    clip_actions: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a deterministic model (``DeterministicMixin`` + ``Model``): values, Q-functions, deterministic actors.

    :param observation_space: observation space.
    :param action_space: action space (``ACTIONS`` / ``STATES_ACTIONS`` inputs of Q-functions, clip bounds).
    :param device: where the model lives.
    :param clip_actions: clamp the output to the action bounds.
    :param network: list of containers.
    :param output: output expression, e.g. ``"ONE"`` for a value function.
    :param return_source: return a readable description instead of the model.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    network, output = _network_and_output("deterministic_model", network, output, args, kwargs)
    if return_source:
        return _single_description(
            "DeterministicModel", "DeterministicMixin", {"clip_actions": clip_actions}, network, output,
            observation_space=observation_space, action_space=action_space,
        )  # fmt: skip
    return DeterministicModel(observation_space, action_space, device, clip_actions, network, output)


def categorical_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    unnormalized_log_prob: bool = True,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a categorical policy (``CategoricalMixin`` + ``Model``) for a ``Discrete`` action space.

    :param observation_space: observation space.
    :param action_space: the ``Discrete`` action space (``ACTIONS`` = number of classes).
    :param device: where the model lives.
    :param unnormalized_log_prob: the output holds logits (``True``) or probabilities (``False``).
    :param network: list of containers.
    :param output: output expression, usually ``"ACTIONS"``.
    :param return_source: return a readable description instead of the model.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    network, output = _network_and_output("categorical_model", network, output, args, kwargs)
    if return_source:
        return _single_description(
            "CategoricalModel", "CategoricalMixin", {"unnormalized_log_prob": unnormalized_log_prob}, network, output,
            observation_space=observation_space, action_space=action_space,
        )  # fmt: skip
    return CategoricalModel(observation_space, action_space, device, unnormalized_log_prob, network, output)


def multicategorical_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    unnormalized_log_prob: bool = True,
    reduction: str = "sum",
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a multi-categorical policy (``MultiCategoricalMixin`` + ``Model``) for a ``MultiDiscrete`` space.

    :param observation_space: observation space.
    :param action_space: the ``MultiDiscrete`` action space (``ACTIONS`` = ``sum(nvec)`` logits).
    :param device: where the model lives.
    :param unnormalized_log_prob: the output holds logits (``True``) or probabilities (``False``).
    :param reduction: how the components' log-probabilities are combined.
    :param network: list of containers.
    :param output: output expression, usually ``"ACTIONS"``.
    :param return_source: return a readable description instead of the model.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    network, output = _network_and_output("multicategorical_model", network, output, args, kwargs)
    if return_source:
        options = {"unnormalized_log_prob": unnormalized_log_prob, "reduction": reduction}
        return _single_description(
            "MultiCategoricalModel", "MultiCategoricalMixin", options, network, output,
            observation_space=observation_space, action_space=action_space,
        )  # fmt: skip
    return MultiCategoricalModel(
        observation_space, action_space, device, unnormalized_log_prob, reduction, network, output
    )


_SHARED_EXTRA_KEYS = ("network", "output", "initial_log_std", "fixed_log_std", "class")


def _shared_parameters(mixins: Sequence[type], roles: Sequence[str], parameters: Sequence[Any]) -> list:
    checked = []
    for index, (mixin, role, parameter) in enumerate(zip(mixins, roles, parameters)):
        if not isinstance(parameter, Mapping):
            raise ValueError(f"shared_model parameters[{index}] must be a dict, got {parameter!r}")
        parameter = dict(parameter)  # never modify the caller's dicts
        legacy = {key: parameter.pop(key) for key in legacy_parameters() if key in parameter}
        if not parameter.get("network"):
            if not legacy and index == 0:
                raise ValueError("shared_model parameters[0] has no 'network': the first role defines the trunk")
            if legacy:
                parameter["network"], parameter["output"] = convert_deprecated_parameters(legacy)
        allowed = set(MIXIN_OPTIONS[mixin]) | set(_SHARED_EXTRA_KEYS)
        unknown = set(parameter) - allowed
        if unknown:
            raise ValueError(
                f"Unknown key(s) {sorted(unknown)} in shared_model parameters for role {role!r} ({mixin.__name__}): "
                f"allowed keys are {', '.join(sorted(allowed))}"
            )
        checked.append(parameter)
    return checked


def shared_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    structure: Sequence[str] = ["GaussianMixin", "DeterministicMixin"],
    roles: Sequence[str] = [],
    parameters: Sequence[Mapping[str, Any]] = [],
    single_forward_pass: bool = True,
    return_source: bool = False,
) -> Model | str:
    """Build one model serving two roles (e.g. policy and value) over a shared trunk.

    The first role's ``network`` defines the trunk; each role gets its own final layer (``self.<role>_layer``)
    and output expression, and its mixin; ``act``, ``get_entropy``, ``distribution`` and ``get_log_std``
    dispatch on the role.

    :param observation_space: observation space.
    :param action_space: action space.
    :param device: where the model lives.
    :param structure: the two mixin names, e.g. ``["GaussianMixin", "DeterministicMixin"]`` (case-insensitive).
    :param roles: the two role names, e.g. ``["policy", "value"]``.
    :param parameters: one dict per role: ``network`` (first role only), ``output`` and mixin options.
    :param single_forward_pass: run the trunk once per (first role, second role) pair of calls.
    :param return_source: return a readable description instead of the model.
    """
    if not (len(structure) == len(roles) == len(parameters) == 2):
        raise ValueError(
            f"shared_model needs exactly two entries in structure ({len(structure)}), roles ({len(roles)}) and "
            f"parameters ({len(parameters)})"
        )
    mixins = []
    for name in structure:
        mixin = MIXINS.get(str(name).lower())
        if mixin is None:
            raise ValueError(f"Unknown mixin {name!r} in shared_model structure: use one of {', '.join(_MIXIN_NAMES)}")
        mixins.append(mixin)
    if mixins[0] is mixins[1]:
        raise ValueError(
            f"shared_model structure {list(structure)} repeats {mixins[0].__name__}: use two different mixins"
        )
    if all(mixin in GAUSSIAN_TYPES for mixin in mixins):
        raise ValueError("shared_model supports one Gaussian-type role: both would own 'log_std_parameter'")
    for role in roles:
        if not isinstance(role, str) or not role.isidentifier():
            raise ValueError(f"Invalid role {role!r}: roles name attributes (<role>_layer), use identifiers")
    if roles[0] == roles[1]:
        raise ValueError(f"shared_model roles must differ, got {list(roles)}")
    parameters = _shared_parameters(mixins, roles, parameters)
    if return_source:
        return _shared_description(mixins, roles, parameters, single_forward_pass, observation_space, action_space)
    cls = shared_model_class(mixins)
    return cls(observation_space, action_space, device, mixins, roles, parameters, single_forward_pass)


_MIXIN_NAMES = [cls.__name__ for cls in MIXINS.values()]


def _shared_description(
    mixins: Sequence[type],
    roles: Sequence[str],
    parameters: Sequence[Mapping[str, Any]],
    single_forward_pass: bool,
    observation_space: Any,
    action_space: Any,
) -> str:
    spaces = {"observation_space": observation_space, "action_space": action_space}
    containers, first_output = generate_containers(
        parameters[0]["network"], parameters[0].get("output", ""), False, **spaces
    )
    names = [container.name for container in containers]
    space_tokens = {"OBSERVATION_SPACE": observation_space, "ACTION_SPACE": action_space}
    outputs = [first_output, parse_output(parameters[1].get("output", ""), names, space_tokens, embed_output=False)]
    init, extra = [], []
    for mixin, role, parameter, output in zip(mixins, roles, parameters, outputs):
        options = {key: parameter.get(key, default) for key, default in MIXIN_OPTIONS[mixin].items()}
        arguments = "".join(f"{key}={value!r}, " for key, value in options.items())
        init.append(f'{mixin.__name__}.__init__(self, {arguments}role="{role}")')
        if output.token is not None:
            size = {"ACTIONS": "self.num_actions", "ONE": "1"}[output.token]
            extra.append(f"self.{role}_layer = nn.LazyLinear(out_features={size})")
        if mixin in GAUSSIAN_TYPES:
            size = {"ACTIONS": "self.num_actions", "ONE": "1"}[output.size]
            extra.append(
                f"self.log_std_parameter = nn.Parameter(torch.full(size=({size},), "
                f"fill_value={float(parameter.get('initial_log_std', 0))}), "
                f"requires_grad={not parameter.get('fixed_log_std', False)})"
            )
    extra.append("self._shared_output = None")
    trunk = [f"{c.name} = self.{c.name}_container({c.input.text})" for c in containers]
    compute = []
    for index, (mixin, role, output) in enumerate(zip(mixins, roles, outputs)):
        compute.append(f'{"if" if index == 0 else "elif"} role == "{role}":')
        if not single_forward_pass:
            body = list(trunk)
        elif index == 0:
            body = trunk + [f"self._shared_output = {names[-1]}"]
        else:
            body = ["if self._shared_output is None:"] + [f"    {line}" for line in trunk]
            body += ["else:", f"    {names[-1]} = self._shared_output", "self._shared_output = None"]
        result = names[-1]
        if output.token is not None:
            body.append(f"output = self.{role}_layer({names[-1]})")
            result = "output"
        if output.expression is not None:
            body.append(f"output = {output.expression.text}")
            result = "output"
        log_std = "self.log_std_parameter, " if mixin in GAUSSIAN_TYPES else ""
        body.append(f"return {result}, {log_std}{{}}")
        compute += [f"    {line}" for line in body]
    compute.append(f'raise ValueError(f"Unknown role {{role}}: use {roles[0]!r} or {roles[1]!r}")')
    description = _describe("SharedModel", [mixin.__name__ for mixin in mixins], init, containers, extra, compute)
    dispatch = [
        "",
        "    def act(self, inputs, role):",
        f'        if role == "{roles[0]}":',
        f"            return {mixins[0].__name__}.act(self, inputs, role)",
        f'        elif role == "{roles[1]}":',
        f"            return {mixins[1].__name__}.act(self, inputs, role)",
        f'        raise ValueError(f"Unknown role {{role}}: use {roles[0]!r} or {roles[1]!r}")',
    ]
    return description + "\n".join(dispatch) + "\n"
