"""Parsing of the network-definition language shared by the torch model instantiators.

A definition is data (a list of containers and an output expression, typically read from YAML); it is turned
into checked Python objects here and into ``nn.Module``\\ s by the models, without generating or executing code.
"""

import keyword
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Sequence, Union

import torch

from skrl_like import logger
from skrl_like.torch.utils.model_instantiators._expressions import (
    ACTIVATION_FUNCTIONS,
    OUTPUT_TOKENS,
    CompiledExpression,
    compile_expression,
    one_hot_encoding,
)

__all__ = [
    "Shape",
    "one_hot_encoding",
    "get_num_units",
    "generate_containers",
    "convert_deprecated_parameters",
    "LayerDefinition",
    "ContainerDefinition",
    "OutputDefinition",
    "parse_output",
]


class Shape(Enum):
    """Size tokens of the pre-1.3 instantiator API (still understood: ``str(Shape.STATES)`` is a valid token)."""

    ONE = 1
    STATES = 0
    OBSERVATIONS = 0
    ACTIONS = -1
    STATES_ACTIONS = -2


_SIZE_TOKENS = ("ONE", "STATES", "OBSERVATIONS", "ACTIONS", "STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
_RESERVED_NAMES = {*_SIZE_TOKENS, "OBSERVATION_SPACE", "ACTION_SPACE", "STATE_SPACE", "Shape"}
_RESERVED_NAMES |= {"states", "observations", "taken_actions", "output"}
_LEGACY_PARAMETERS = (
    "input_shape",
    "hiddens",
    "hidden_activation",
    "output_shape",
    "output_activation",
    "output_scale",
)
_ACTIVATION_MODULES = {
    "relu": lambda: torch.nn.ReLU(),
    "tanh": lambda: torch.nn.Tanh(),
    "sigmoid": lambda: torch.nn.Sigmoid(),
    "leaky_relu": lambda: torch.nn.LeakyReLU(),
    "elu": lambda: torch.nn.ELU(),
    "softplus": lambda: torch.nn.Softplus(),
    "softsign": lambda: torch.nn.Softsign(),
    "selu": lambda: torch.nn.SELU(),
    "softmax": lambda: torch.nn.Softmax(dim=-1),
}
_ACTIVATION_TEXT = {
    "relu": "nn.ReLU()",
    "tanh": "nn.Tanh()",
    "sigmoid": "nn.Sigmoid()",
    "leaky_relu": "nn.LeakyReLU()",
    "elu": "nn.ELU()",
    "softplus": "nn.Softplus()",
    "softsign": "nn.Softsign()",
    "selu": "nn.SELU()",
    "softmax": "nn.Softmax(dim=-1)",
}


def _token_name(token: Any) -> Any:
    if isinstance(token, Shape):
        return token.name
    if isinstance(token, str):
        name = token.strip()
        return name[len("Shape.") :] if name.startswith("Shape.") else name
    return token


def get_num_units(token: Any, num_observations: int | None = None, num_actions: int | None = None) -> int:
    """Number of units a size token stands for.

    :param token: an integer, or ``ONE``, ``STATES``/``OBSERVATIONS``, ``ACTIONS``, ``STATES_ACTIONS``/
        ``OBSERVATIONS_ACTIONS`` (also ``"Shape.<NAME>"`` or a :class:`Shape` member).
    :param num_observations: the model's observation size.
    :param num_actions: the model's action size.
    """
    name = _token_name(token)
    if isinstance(name, bool):
        raise ValueError(f"Invalid size {token!r}: use a positive integer or one of {', '.join(_SIZE_TOKENS)}")
    if isinstance(name, int):
        return name
    if isinstance(name, float) and name.is_integer():
        return int(name)
    sizes = {
        "ONE": 1,
        "STATES": num_observations,
        "OBSERVATIONS": num_observations,
        "ACTIONS": num_actions,
        "STATES_ACTIONS": None if num_observations is None or num_actions is None else num_observations + num_actions,
    }
    sizes["OBSERVATIONS_ACTIONS"] = sizes["STATES_ACTIONS"]
    if name not in sizes:
        raise ValueError(f"Invalid size {token!r}: use a positive integer or one of {', '.join(_SIZE_TOKENS)}")
    if sizes[name] is None:
        raise ValueError(
            f"Size token {name} needs the model's {'action' if 'ACTIONS' in name else 'observation'} space"
        )
    return sizes[name]


def _size_text(value: Any) -> str:
    name = _token_name(value)
    texts = {
        "ONE": "1",
        "STATES": "self.num_observations",
        "OBSERVATIONS": "self.num_observations",
        "ACTIONS": "self.num_actions",
        "STATES_ACTIONS": "self.num_observations + self.num_actions",
        "OBSERVATIONS_ACTIONS": "self.num_observations + self.num_actions",
    }
    return texts[name] if isinstance(name, str) and name in texts else repr(name)


# --- layers --------------------------------------------------------------------------------------------------


@dataclass
class LayerDefinition:
    """One parsed layer: its kind, keyword arguments (sizes may still be tokens) and following activation.

    :param kind: ``"linear"``, ``"conv2d"`` or ``"flatten"``.
    :param arguments: constructor keyword arguments.
    :param activation: activation name applied after the layer, or ``None``.
    """

    kind: str
    arguments: dict = field(default_factory=dict)
    activation: str | None = None

    def build(self, num_observations: int | None, num_actions: int | None) -> list:
        """Create the layer (and its activation) as ``nn.Module``\\ s.

        :param num_observations: resolves ``STATES``-type size tokens.
        :param num_actions: resolves ``ACTIONS``-type size tokens.
        """
        arguments = dict(self.arguments)
        if self.kind == "linear":
            arguments["out_features"] = get_num_units(arguments["out_features"], num_observations, num_actions)
            if "in_features" in arguments:
                arguments["in_features"] = get_num_units(arguments["in_features"], num_observations, num_actions)
                modules = [torch.nn.Linear(**arguments)]
            else:
                modules = [torch.nn.LazyLinear(**arguments)]
        elif self.kind == "conv2d":
            modules = [torch.nn.Conv2d(**arguments) if "in_channels" in arguments else torch.nn.LazyConv2d(**arguments)]
        else:
            modules = [torch.nn.Flatten(**arguments)]
        if self.activation:
            modules.append(_ACTIVATION_MODULES[self.activation]())
        return modules

    def describe(self) -> list[str]:
        """Readable constructor calls, as they would appear in generated source."""
        if self.kind == "linear":
            name = "nn.Linear" if "in_features" in self.arguments else "nn.LazyLinear"
        elif self.kind == "conv2d":
            name = "nn.Conv2d" if "in_channels" in self.arguments else "nn.LazyConv2d"
        else:
            name = "nn.Flatten"
        arguments = ", ".join(f"{key}={_size_text(value)}" for key, value in self.arguments.items())
        lines = [f"{name}({arguments})"]
        if self.activation:
            lines.append(_ACTIVATION_TEXT[self.activation])
        return lines


_LAYER_KEYWORDS = {
    "linear": {"out_features": "out_features", "features": "out_features", "in_features": "in_features",
               "bias": "bias", "use_bias": "bias"},
    "conv2d": {"out_channels": "out_channels", "features": "out_channels", "in_channels": "in_channels",
               "kernel_size": "kernel_size", "stride": "stride", "strides": "stride", "padding": "padding",
               "bias": "bias", "use_bias": "bias"},
    "flatten": {"start_dim": "start_dim", "end_dim": "end_dim"},
}  # fmt: skip
_LAYER_POSITIONAL = {
    "linear": ("out_features", "bias"),
    "conv2d": ("out_channels", "kernel_size", "stride", "padding", "bias"),
    "flatten": ("start_dim", "end_dim"),
}
_LAYER_REQUIRED = {"linear": ("out_features",), "conv2d": ("out_channels", "kernel_size"), "flatten": ()}


def _parse_layer(layer: Any, where: str) -> LayerDefinition:
    if isinstance(layer, bool):
        raise ValueError(f"Invalid layer {layer!r} in {where}: use a number of units, 'flatten' or a one-key dict")
    if isinstance(layer, (int, float)):
        layer = {"linear": layer}
    elif isinstance(layer, str):
        if layer.strip().lower() != "flatten":
            raise ValueError(
                f"Invalid layer {layer!r} in {where}: the only layer written as a string is 'flatten'; "
                "write linear layers as a number (64) or {'linear': 64}, convolutions as {'conv2d': [...]}"
            )
        layer = {"flatten": {}}
    if not isinstance(layer, Mapping) or len(layer) != 1:
        raise ValueError(
            f"Invalid layer {layer!r} in {where}: use a number of units, 'flatten' or a dict with one key "
            "(linear, conv2d or flatten)"
        )
    (layer_type, value), = layer.items()  # fmt: skip
    kind = str(layer_type).lower()
    if kind not in _LAYER_KEYWORDS:
        raise ValueError(f"Unknown layer type {layer_type!r} in {where}: allowed types are linear, conv2d, flatten")
    if value is None:
        value = {}
    if isinstance(value, (int, float, str)) and not isinstance(value, bool) and kind == "linear":
        arguments = {"out_features": value}
    elif isinstance(value, (list, tuple)):
        names = _LAYER_POSITIONAL[kind]
        if len(value) > len(names):
            raise ValueError(
                f"Too many positional values {list(value)} for {kind} in {where}: at most {len(names)} "
                f"({', '.join(names)})"
            )
        arguments = dict(zip(names, value))
    elif isinstance(value, Mapping):
        keywords = _LAYER_KEYWORDS[kind]
        arguments = {}
        for key, item in value.items():
            if key not in keywords:
                raise ValueError(
                    f"Unknown {kind} argument {key!r} in {where}: allowed arguments are {', '.join(keywords)}"
                )
            arguments[keywords[key]] = item
    else:
        raise ValueError(f"Invalid {kind} definition {value!r} in {where}: use a list or a dict of arguments")
    missing = [name for name in _LAYER_REQUIRED[kind] if name not in arguments]
    if missing:
        raise ValueError(f"The {kind} layer in {where} needs {', '.join(missing)}")
    if kind == "linear":
        get_num_units(arguments["out_features"], 1, 1)  # validate the token now, resolve it per model later
        if "in_features" in arguments:
            get_num_units(arguments["in_features"], 1, 1)
    if kind == "conv2d":
        for key, item in list(arguments.items()):
            if isinstance(item, str):
                arguments[key] = item.lower()  # torch spells padding modes in lower case ("same", "valid")
            elif isinstance(item, list):
                arguments[key] = tuple(item)
    return LayerDefinition(kind, arguments)


def _expand_activations(activations: Any, count: int, where: str) -> list:
    if activations is None:
        expanded: list = [None] * count
    elif isinstance(activations, str):
        expanded = [activations] * count
    elif isinstance(activations, (list, tuple)):
        if not activations:
            expanded = [None] * count
        elif len(activations) == 1:
            expanded = list(activations) * count
        elif len(activations) == count:
            expanded = list(activations)
        else:
            raise NotImplementedError(
                f"{where} has {count} layers but {len(activations)} activations: give one activation name, "
                "a list with one name, or one name per layer"
            )
    else:
        raise ValueError(f"Invalid activations {activations!r} in {where}: use a name or a list of names")
    names = []
    for activation in expanded:
        if activation is None or (isinstance(activation, str) and not activation.strip()):
            names.append(None)
            continue
        name = str(activation).strip().lower()
        if name not in ACTIVATION_FUNCTIONS:
            raise ValueError(
                f"Unknown activation {activation!r} in {where}: allowed activations are "
                f"{', '.join(ACTIVATION_FUNCTIONS)} (or an empty string for none)"
            )
        names.append(name)
    return names


# --- containers and output -----------------------------------------------------------------------------------


@dataclass
class ContainerDefinition:
    """A parsed container: ``<name> = self.<name>_container(<input>)``.

    :param name: container name (a Python identifier; its output is referable by this name).
    :param input: the compiled input expression.
    :param layers: the parsed layers, in order.
    """

    name: str
    input: CompiledExpression
    layers: list

    def build(self, num_observations: int | None, num_actions: int | None) -> list:
        """All modules of the container (layers and activations), in order."""
        modules = []
        for layer in self.layers:
            modules.extend(layer.build(num_observations, num_actions))
        return modules


@dataclass
class OutputDefinition:
    """A parsed output expression.

    :param expression: the compiled expression, or ``None`` when the output is the last container's output
        (possibly through the final layer) as it is.
    :param token: ``"ACTIONS"`` or ``"ONE"`` when a final linear layer is needed, else ``None``.
    :param size: size token of the output (sizes the final layer and the Gaussian log-std parameter).
    """

    expression: CompiledExpression | None
    token: str | None
    size: str = "ACTIONS"


def _check_container_name(name: Any, seen: Sequence[str], index: int) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"Invalid name {name!r} for network container {index}: use a Python identifier such as 'net'")
    if name in _RESERVED_NAMES:
        raise ValueError(f"Invalid name {name!r} for network container {index}: it is a reserved token")
    if name in seen:
        raise ValueError(f"Duplicate network container name {name!r}: container names must be unique")
    return name


def generate_containers(
    network: Sequence[Mapping[str, Any]],
    output: Union[str, Sequence[str]],
    embed_output: bool = True,
    indent: int = -1,
    *,
    observation_space: Any = None,
    action_space: Any = None,
) -> tuple[list, OutputDefinition]:
    """Parse and check a network definition and its output expression.

    :param network: list of ``{"name", "input", "layers", "activations"}`` dicts.
    :param output: output expression (``"ACTIONS"``, ``"ONE"``, ``"2 * tanh(ACTIONS)"``...).
    :param embed_output: whether the final layer goes at the end of the last container (single models) or
        stays separate (shared models, one final layer per role).
    :param indent: ignored (skrl used it to indent generated source).
    :param observation_space: space ``OBSERVATION_SPACE`` refers to (for ``one_hot_encoding``).
    :param action_space: space ``ACTION_SPACE`` refers to.
    :return: ``(containers, output)``: a list of :class:`ContainerDefinition` and an :class:`OutputDefinition`;
        when ``embed_output`` is set, the final layer is already appended to the last container's layers.
    """
    if isinstance(network, Mapping) or not isinstance(network, (list, tuple)):
        raise ValueError(f"network must be a list of container definitions, got {network!r}")
    if not network:
        raise ValueError("network is empty: define at least one container ({'name', 'input', 'layers'})")
    spaces = {"OBSERVATION_SPACE": observation_space, "ACTION_SPACE": action_space}
    containers: list = []
    names: list = []
    for index, item in enumerate(network):
        if not isinstance(item, Mapping):
            raise ValueError(f"Network container {index} must be a dict with name, input, layers, activations")
        unknown = set(item) - {"name", "input", "layers", "activations"}
        if unknown:
            raise ValueError(
                f"Unknown key(s) {sorted(unknown)} in network container {index}: allowed keys are name, input, "
                "layers, activations"
            )
        for key in ("name", "input", "layers"):
            if key not in item:
                raise ValueError(f"Network container {index} has no {key!r}")
        name = _check_container_name(item["name"], names, index)
        where = f"network container {name!r}"
        expression = compile_expression(
            item["input"], where=f"input of {where}", is_output=False, container_names=names, spaces=spaces
        )
        layers_value = item["layers"]
        if not isinstance(layers_value, (list, tuple)):
            raise ValueError(f"layers of {where} must be a list, got {layers_value!r}")
        layers = [_parse_layer(layer, where) for layer in layers_value]
        activations = _expand_activations(item.get("activations"), len(layers), where)
        for layer, activation in zip(layers, activations):
            layer.activation = None if layer.kind == "flatten" else activation  # nothing follows a flatten
        containers.append(ContainerDefinition(name, expression, layers))
        names.append(name)

    output_definition = parse_output(output, names, spaces, embed_output)
    if embed_output and output_definition.token is not None:
        containers[-1].layers.append(LayerDefinition("linear", {"out_features": output_definition.token}))
    return containers, output_definition


def parse_output(
    output: Any, names: Sequence[str], spaces: Mapping[str, Any], embed_output: bool = True
) -> OutputDefinition:
    """Parse and check an output expression.

    :param output: the expression (``""`` means the last container's output as it is).
    :param names: container names the expression may refer to (the last one is the network's output).
    :param spaces: ``{"OBSERVATION_SPACE": ..., "ACTION_SPACE": ...}``.
    :param embed_output: whether the final layer is embedded in the last container (only changes how the
        token is shown in the readable form).
    """
    if isinstance(output, (list, tuple)):
        raise NotImplementedError(f"Multiple outputs ({output!r}) are not supported: give a single output expression")
    if isinstance(output, Shape):
        output = str(output)
    if output is None or not str(output).strip():
        return OutputDefinition(None, None)
    if not isinstance(output, str):
        raise ValueError(f"Invalid network output {output!r}: use an expression string such as 'ACTIONS'")
    expression = compile_expression(
        output,
        where="network output",
        is_output=True,
        container_names=names,
        spaces=spaces,
        token_text=names[-1] if embed_output else "output",
    )
    token = next(iter(expression.tokens), None)
    size = token or "ACTIONS"
    bare = expression.source.removeprefix("Shape.")
    if bare in OUTPUT_TOKENS or bare == names[-1]:
        return OutputDefinition(None, token, size)  # the last container (with its final layer) is the output
    return OutputDefinition(expression, token, size)


# --- legacy parameters ---------------------------------------------------------------------------------------


def convert_deprecated_parameters(parameters: Mapping[str, Any]) -> tuple[list, str]:
    """Convert pre-1.3 instantiator parameters into a ``(network, output)`` definition (with a warning).

    :param parameters: any of ``input_shape``, ``hiddens``, ``hidden_activation``, ``output_shape``,
        ``output_activation``, ``output_scale``.
    :return: ``([{"name": "net", "input": ..., "layers": ..., "activations": ...}], output expression)``.
    """
    logger.warning(
        f"The instantiator parameters ({', '.join(parameters)}) are deprecated: use network=[...] and output=..."
    )
    activations = parameters.get("hidden_activation", [])
    if isinstance(activations, (list, tuple)) and len(set(activations)) == 1:
        activations = activations[0]
    network = [
        {
            "name": "net",
            "input": str(parameters.get("input_shape", "STATES")),
            "layers": list(parameters.get("hiddens", [])),
            "activations": activations,
        }
    ]
    output = str(parameters.get("output_shape", "ACTIONS"))
    output_activation = parameters.get("output_activation")
    if output_activation:
        output = f"{output_activation}({output})"
    output_scale = parameters.get("output_scale", 1.0)
    if output_scale != 1.0:
        output = f"{output_scale} * {output}"
    return network, output


def legacy_parameters() -> tuple:
    """Names of the pre-1.3 instantiator parameters (accepted through ``**kwargs``)."""
    return _LEGACY_PARAMETERS
