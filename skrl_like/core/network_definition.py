"""The network-definition language of the model instantiators, parsed and validated once for every backend.

A definition is data (the ``network`` list of containers, an ``output`` expression and the model options,
usually read from YAML). skrl 1.4 turns it into Python source and ``exec``\\ s it; here it becomes a plain
description (:class:`ModelDefinition`: containers of :class:`Layer`\\ s, expression trees of small nodes) that
never holds user text to run. A backend subclasses :class:`NetworkBackend` to supply its table of layers,
activations and tensor operations, and builds its modules from the description; everything else (what is
valid, what it means, the error messages) is decided here, so both backends accept and refuse the same things.
"""

import ast
import enum
import keyword
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from skrl_like._logging import logger

__all__ = [
    "Shape",
    "ACTIVATIONS",
    "Layer",
    "Container",
    "Recurrent",
    "RECURRENT_TYPES",
    "DEFAULT_SEQUENCE_LENGTH",
    "recurrent_container",
    "Output",
    "ModelDefinition",
    "SharedModelDefinition",
    "NetworkBackend",
    "get_num_units",
    "parse_expression",
    "parse_layer",
    "generate_containers",
    "parse_output",
    "parse_model",
    "parse_shared_model",
    "instantiator_definition",
    "convert_deprecated_parameters",
]


class Shape(enum.Enum):
    """Size tokens of the pre-1.3 instantiator API; ``str(Shape.X)`` forms such as ``"Shape.STATES"`` are understood."""

    ONE = 1
    STATES = 0
    OBSERVATIONS = 0  # alias of STATES
    ACTIONS = -1
    STATES_ACTIONS = -2


ACTIVATIONS = ("relu", "tanh", "sigmoid", "leaky_relu", "elu", "softplus", "softsign", "selu", "softmax")
SIZE_TOKENS = ("ONE", "STATES", "OBSERVATIONS", "ACTIONS", "STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
OUTPUT_TOKENS = ("ACTIONS", "ONE")
FUNCTIONS = ("concatenate", "permute", "one_hot_encoding")
SPACE_TOKENS = ("OBSERVATION_SPACE", "ACTION_SPACE")
LEGACY_PARAMETERS = ("input_shape", "hiddens", "hidden_activation", "output_shape", "output_activation", "output_scale")
# key of the final (token) layer's result among the values an output expression reads; not an identifier, so it
# cannot collide with a container name
OUTPUT_KEY = "<output layer>"
_STATE_NAMES = ("STATES", "OBSERVATIONS")
_PAIR_NAMES = ("STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
_RESERVED_NAMES = {*SIZE_TOKENS, *SPACE_TOKENS, *FUNCTIONS, "STATE_SPACE", "Shape"}
_RESERVED_NAMES |= {"states", "observations", "taken_actions", "output"}
_CONTAINER_KEYS = ("name", "input", "layers", "activations", "type", "num_layers", "sequence_length")
_RECURRENT_KEYS = ("type", "num_layers", "sequence_length")
#: the ``type`` of a recurrent container (Isaac Lab 3.0's skrl YAML form); LSTM carries two state tensors
RECURRENT_TYPES = ("GRU", "LSTM", "RNN")
#: the training sequence length of a recurrent container that names none
DEFAULT_SEQUENCE_LENGTH = 16
_MAX_EXPRESSION_LENGTH = 1000
_MAX_EXPONENT = 64


def _token_name(token: Any) -> Any:
    if isinstance(token, Shape):
        return token.name
    if isinstance(token, str):
        return token.strip().removeprefix("Shape.")
    return token


# --- sizes ---------------------------------------------------------------------------------------------------

_SIZE_DESCRIPTIONS = {
    "ONE": "1",
    "STATES": "num_observations",
    "OBSERVATIONS": "num_observations",
    "ACTIONS": "num_actions",
    "STATES_ACTIONS": "num_observations + num_actions",
    "OBSERVATIONS_ACTIONS": "num_observations + num_actions",
}


def get_num_units(token: Any, num_observations: int | None = None, num_actions: int | None = None) -> Union[int, str]:
    """Number of units a size token stands for.

    :param token: a positive int, or ``ONE``, ``STATES``/``OBSERVATIONS``, ``ACTIONS``, ``STATES_ACTIONS``/
        ``OBSERVATIONS_ACTIONS`` (also ``"Shape.<NAME>"`` or a :class:`Shape` member).
    :param num_observations: the model's observation size.
    :param num_actions: the model's action size.
    :return: the size; with neither size given, a readable description of a token (``"num_actions"``).
    """
    name = _token_name(token)
    if isinstance(name, bool) or isinstance(name, float) and not name.is_integer():
        raise ValueError(f"Invalid size {token!r}: use a positive integer or one of {', '.join(SIZE_TOKENS)}")
    if isinstance(name, (int, float)):
        if name <= 0:
            raise ValueError(f"Invalid size {token!r}: sizes must be positive")
        return int(name)
    if name not in _SIZE_DESCRIPTIONS:
        raise ValueError(f"Invalid size {token!r}: use a positive integer or one of {', '.join(SIZE_TOKENS)}")
    if num_observations is None and num_actions is None:
        return _SIZE_DESCRIPTIONS[name]
    needs_observations = "STATES" in name or "OBSERVATIONS" in name
    needs_actions = "ACTIONS" in name
    if (needs_observations and num_observations is None) or (needs_actions and num_actions is None):
        space = "observation" if needs_observations and num_observations is None else "action"
        raise ValueError(f"Size token {name} needs the model's {space} space: pass {space}_space to the instantiator")
    return {
        "ONE": 1,
        "STATES": num_observations,
        "OBSERVATIONS": num_observations,
        "ACTIONS": num_actions,
        "STATES_ACTIONS": (num_observations or 0) + (num_actions or 0),
        "OBSERVATIONS_ACTIONS": (num_observations or 0) + (num_actions or 0),
    }[name]


def _size(value: Any) -> Union[int, str]:
    """A validated size: a positive int or a canonical token name (resolved per model later)."""
    get_num_units(value)
    name = _token_name(value)
    return int(name) if isinstance(name, (int, float)) else name


# --- expressions ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A value read by key: ``"states"``, ``"taken_actions"``, a container name or :data:`OUTPUT_KEY`."""

    key: str


@dataclass(frozen=True)
class Space:
    """The model's ``"observation_space"`` or ``"action_space"`` (first argument of ``one_hot_encoding``)."""

    key: str


@dataclass(frozen=True)
class Constant:
    """A number."""

    value: Union[int, float]


@dataclass(frozen=True)
class Unary:
    """``-x`` or ``+x``."""

    symbol: str
    operand: Any


@dataclass(frozen=True)
class Binary:
    """``left <symbol> right`` with symbol one of ``+ - * / **``."""

    symbol: str
    left: Any
    right: Any


@dataclass(frozen=True)
class Index:
    """``value[index]``; the index is a literal (int, str, slice, tuple, ``None`` or ``...``)."""

    value: Any
    index: Any


@dataclass(frozen=True)
class Concatenate:
    """``concatenate([a, b, ...])`` along the last (feature) axis."""

    parts: tuple


@dataclass(frozen=True)
class Permute:
    """``permute(x, dims)``."""

    value: Any
    dims: tuple


@dataclass(frozen=True)
class OneHot:
    """``one_hot_encoding(SPACE, x)``."""

    space: Space
    value: Any


@dataclass(frozen=True)
class Activation:
    """An activation function applied to an expression, e.g. ``tanh(x)``."""

    name: str
    value: Any


_OPERATORS = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.Pow: ("**", operator.pow),
}
_FUNCTIONS_BY_SYMBOL = {symbol: function for symbol, function in _OPERATORS.values()}


@dataclass(frozen=True)
class Expression:
    """A parsed input or output expression.

    :param source: the expression as written.
    :param tree: its node tree (:class:`Name`, :class:`Binary`, :class:`Concatenate`...).
    :param tokens: output tokens used (``"ACTIONS"``/``"ONE"``; output expressions only).
    :param names: container names read.
    """

    source: str
    tree: Any
    tokens: frozenset = frozenset()
    names: frozenset = frozenset()


class _Parser:
    def __init__(self, source: str, where: str, is_output: bool, container_names: Sequence[str]) -> None:
        self.source, self.where, self.is_output = source, where, is_output
        self.container_names = list(container_names)
        self.tokens: set[str] = set()
        self.names: set[str] = set()

    def error(self, problem: str, hint: str) -> ValueError:
        return ValueError(f"Invalid expression {self.source!r} for {self.where}: {problem}; {hint}")

    def allowed_names(self) -> str:
        names = [*_STATE_NAMES, "ACTIONS", *_PAIR_NAMES, *(["ONE"] if self.is_output else []), *self.container_names]
        return "allowed names: " + ", ".join(names) + " (also as Shape.<NAME>)"

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return self.visit_name(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "Shape":
                return self.visit_name(node.attr)
            raise self.error(f"attribute access {ast.unparse(node)!r} is not allowed", "only Shape.<NAME> has a dot")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return Constant(node.value)
            raise self.error(f"constant {node.value!r} is not allowed here", "only numbers may appear as constants")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return Unary("-" if isinstance(node.op, ast.USub) else "+", self.visit(node.operand))
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _OPERATORS:
                raise self.error(f"operator {type(node.op).__name__} is not allowed", "allowed operators: + - * / **")
            if isinstance(node.op, ast.Pow):
                self.check_exponent(node.right)
            return Binary(_OPERATORS[type(node.op)][0], self.visit(node.left), self.visit(node.right))
        if isinstance(node, ast.Subscript):
            return Index(self.visit(node.value), self.literal_index(node.slice))
        if isinstance(node, ast.Call):
            return self.visit_call(node)
        raise self.error(
            f"{type(node).__name__} expressions ({ast.unparse(node)!r}) are not part of the network language",
            "use names, numbers, + - * / **, literal indexing and the functions " + ", ".join(FUNCTIONS + ACTIVATIONS),
        )

    def visit_name(self, name: str) -> Any:
        if self.is_output and name in OUTPUT_TOKENS:
            self.tokens.add(name)
            return Name(OUTPUT_KEY)
        if name in _STATE_NAMES:
            return Name("states")
        if name == "ACTIONS":
            return Name("taken_actions")
        if name in _PAIR_NAMES:
            return Concatenate((Name("states"), Name("taken_actions")))
        if name in self.container_names:
            self.names.add(name)
            return Name(name)
        if name in SPACE_TOKENS:
            raise self.error(f"{name} can only be the first argument of one_hot_encoding", self.allowed_names())
        if name == "STATE_SPACE":
            raise self.error("STATE_SPACE is not defined on models", "use OBSERVATION_SPACE")
        raise self.error(f"unknown name {name!r}", self.allowed_names())

    def check_exponent(self, node: ast.AST) -> None:
        # a literal, bounded exponent: ** of Python ints with arbitrary exponents could take unbounded time
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if not (isinstance(node, ast.Constant) and type(node.value) in (int, float)):
            raise self.error("the exponent of ** must be a number literal", "write e.g. x ** 2")
        if abs(node.value) > _MAX_EXPONENT:
            raise self.error(f"the exponent {node.value} is too large", f"use at most {_MAX_EXPONENT} in magnitude")

    def literal_index(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            return node.value
        if isinstance(node, ast.Constant) and type(node.value) in (int, str):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.literal_index(node.operand)
            if type(value) is int:
                return -value
        if isinstance(node, ast.Slice):
            parts = [None if part is None else self.literal_index(part) for part in (node.lower, node.upper, node.step)]
            if all(part is None or type(part) is int for part in parts):
                return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.literal_index(element) for element in node.elts)
        raise self.error(
            f"index {ast.unparse(node)!r} is not allowed", "indexes are literal ints, strings, slices, None or ..."
        )

    def visit_call(self, node: ast.Call) -> Any:
        allowed = "allowed functions: " + ", ".join(FUNCTIONS + ACTIVATIONS)
        if not isinstance(node.func, ast.Name):
            raise self.error(f"call of {ast.unparse(node.func)!r} is not allowed", allowed)
        name = node.func.id.lower()
        if name not in FUNCTIONS and name not in ACTIVATIONS:
            raise self.error(f"unknown function {node.func.id!r}", allowed)
        if node.keywords:
            raise self.error(f"{name} takes no keyword arguments", "pass its arguments by position")
        arguments = node.args
        if name == "concatenate":
            if len(arguments) != 1 or not isinstance(arguments[0], (ast.List, ast.Tuple)) or not arguments[0].elts:
                raise self.error("concatenate takes one list of expressions", "write concatenate([a, b, ...])")
            return Concatenate(tuple(self.visit(element) for element in arguments[0].elts))
        if name == "permute":
            dims = arguments[1] if len(arguments) == 2 else None
            if not isinstance(dims, (ast.List, ast.Tuple)) or not all(
                isinstance(dim, ast.Constant) and type(dim.value) is int for dim in dims.elts
            ):
                raise self.error(
                    "permute takes a tensor and a tuple of int dimensions", "write permute(x, (0, 3, 1, 2))"
                )
            return Permute(self.visit(arguments[0]), tuple(dim.value for dim in dims.elts))
        if name == "one_hot_encoding":
            if len(arguments) != 2 or not (isinstance(arguments[0], ast.Name) and arguments[0].id in SPACE_TOKENS):
                raise self.error(
                    "one_hot_encoding takes a space and a tensor",
                    "write one_hot_encoding(OBSERVATION_SPACE, OBSERVATIONS) or with ACTION_SPACE",
                )
            return OneHot(Space(arguments[0].id.lower()), self.visit(arguments[1]))
        if len(arguments) != 1:
            raise self.error(f"{name} takes exactly one argument", f"write {name}(x)")
        return Activation(name, self.visit(arguments[0]))


def parse_expression(source: Any, where: str, container_names: Sequence[str], is_output: bool = False) -> Expression:
    """Parse and check an input or output expression (user text is never evaluated).

    :param source: the expression (a string; :class:`Shape` members are accepted).
    :param where: what the expression is, for error messages (``"network container 'net' input"``).
    :param container_names: the container names it may read (those defined before it).
    :param is_output: output expressions read ``ACTIONS``/``ONE`` as the result of the final layer.
    """
    if isinstance(source, Shape):
        source = str(source)
    if not isinstance(source, str):
        raise ValueError(f"Invalid expression {source!r} for {where}: use an expression string such as 'OBSERVATIONS'")
    text = source.strip()
    parser = _Parser(text, where, is_output, container_names)
    if not text:
        raise parser.error("the expression is empty", parser.allowed_names())
    if len(text) > _MAX_EXPRESSION_LENGTH:
        raise ValueError(f"The expression for {where} is longer than {_MAX_EXPRESSION_LENGTH} characters")
    try:
        body = ast.parse(text, mode="eval").body
    except SyntaxError as error:
        raise parser.error(f"syntax error ({error.msg})", "write a Python-like expression") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"The expression for {where} is nested too deeply") from None
    if is_output and isinstance(body, (ast.List, ast.Tuple)):
        raise NotImplementedError(f"Multiple outputs ({text!r}) are not supported: give a single output expression")
    try:
        tree = parser.visit(body)
    except RecursionError:
        raise ValueError(f"The expression for {where} is nested too deeply") from None
    if len(parser.tokens) > 1:
        raise parser.error("it uses both ACTIONS and ONE", "an output has one final layer: use one token")
    return Expression(text, tree, frozenset(parser.tokens), frozenset(parser.names))


# --- layers --------------------------------------------------------------------------------------------------


@dataclass
class Layer:
    """One parsed layer.

    :param kind: ``"linear"``, ``"conv2d"`` or ``"flatten"``.
    :param options: validated arguments under one name each. linear: ``features`` (size), ``bias``,
        ``in_features``; conv2d: ``features``, ``kernel_size``, ``stride``, ``padding`` (lower-case string, int
        or tuple), ``bias``, ``in_channels``; flatten: ``start_dim``, ``end_dim``. Sizes may be tokens.
    :param activation: activation name applied after the layer, or ``None``.
    """

    kind: str
    options: dict = field(default_factory=dict)
    activation: str | None = None


# accepted argument names (torch's and flax's spellings) -> canonical name, and the positional order
_LAYER_KEYWORDS = {
    "linear": {"out_features": "features", "features": "features", "in_features": "in_features",
               "bias": "bias", "use_bias": "bias"},
    "conv2d": {"out_channels": "features", "features": "features", "in_channels": "in_channels",
               "kernel_size": "kernel_size", "stride": "stride", "strides": "stride", "padding": "padding",
               "bias": "bias", "use_bias": "bias"},
    "flatten": {"start_dim": "start_dim", "end_dim": "end_dim"},
}  # fmt: skip
_LAYER_POSITIONAL = {
    "linear": ("features", "bias"),
    "conv2d": ("features", "kernel_size", "stride", "padding", "bias"),
    "flatten": ("start_dim", "end_dim"),
}
_LAYER_REQUIRED = {"linear": ("features",), "conv2d": ("features", "kernel_size"), "flatten": ()}


def _positive_ints(value: Any, name: str, where: str) -> Union[int, tuple]:
    if type(value) is int and value > 0:
        return value
    if isinstance(value, (list, tuple)) and value and all(type(item) is int and item > 0 for item in value):
        return tuple(value)
    raise ValueError(f"Invalid {name} {value!r} for {where}: use a positive int or a list of them")


def _check_option(kind: str, name: str, value: Any, where: str) -> Any:
    if name in ("features", "in_features", "in_channels"):
        return _size(value)
    if name == "bias":
        if not isinstance(value, bool):
            raise ValueError(f"Invalid bias {value!r} for {where}: use true or false")
        return value
    if name in ("kernel_size", "stride"):
        return _positive_ints(value, name, where)
    if name == "padding":
        if isinstance(value, str) and value.strip().lower() in ("same", "valid"):
            return value.strip().lower()  # torch spells padding modes in lower case; flax's are upper-cased there
        if (type(value) is int and value >= 0) or (
            isinstance(value, (list, tuple)) and value and all(type(item) is int and item >= 0 for item in value)
        ):
            return tuple(value) if isinstance(value, list) else value
        raise ValueError(f"Invalid padding {value!r} for {where}: use 'same', 'valid' or non-negative ints")
    if type(value) is not int:  # start_dim, end_dim
        raise ValueError(f"Invalid {name} {value!r} for {where}: use an int")
    return value


def parse_layer(layer: Any, where: str = "the network") -> Layer:
    """Parse one entry of a container's ``layers`` list.

    :param layer: a number of units, ``"flatten"`` or a one-key dict (``{"linear": ...}``, ``{"conv2d": ...}``,
        ``{"flatten": ...}``) whose value is a scalar (first argument), a list (positional) or a dict (keywords).
    :param where: the container, for error messages.
    """
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
        layer = {"flatten": None}
    if not isinstance(layer, Mapping) or len(layer) != 1:
        raise ValueError(
            f"Invalid layer {layer!r} in {where}: use a number of units, 'flatten' or a dict with one key "
            "(linear, conv2d or flatten)"
        )
    ((layer_type, value),) = layer.items()
    kind = str(layer_type).lower()
    if kind not in _LAYER_KEYWORDS:
        raise ValueError(f"Unknown layer type {layer_type!r} in {where}: allowed types are linear, conv2d, flatten")
    names = _LAYER_POSITIONAL[kind]
    if value is None:
        arguments = {}
    elif isinstance(value, (list, tuple)):
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
        arguments = {names[0]: value}
    missing = [name for name in _LAYER_REQUIRED[kind] if name not in arguments]
    if missing:
        raise ValueError(f"The {kind} layer {layer!r} in {where} needs {', '.join(missing)}")
    where = f"the {kind} layer in {where}"
    return Layer(kind, {name: _check_option(kind, name, item, where) for name, item in arguments.items()})


def _expand_activations(activations: Any, count: int, where: str) -> list:
    if activations is None or (isinstance(activations, (list, tuple)) and not activations):
        expanded: list = [None] * count
    elif isinstance(activations, str):
        expanded = [activations] * count
    elif isinstance(activations, (list, tuple)):
        if len(activations) == 1:
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
        if name not in ACTIVATIONS:
            raise ValueError(
                f"Unknown activation {activation!r} in {where}: allowed activations are {', '.join(ACTIVATIONS)} "
                "(or an empty string for none)"
            )
        names.append(name)
    return names


# --- containers and output -----------------------------------------------------------------------------------


class NetworkInputError(ValueError):
    """A network description that parsed but cannot take the inputs it is given (raised when the model runs)."""


def _per_dimension(value: Any) -> tuple:
    return (value, value) if isinstance(value, int) else tuple(value)


def conv_output_size(size: int, kernel: int, stride: int, padding: Any) -> int:
    """A 2-D convolution's output length along one dimension of length ``size`` (``padding``: ``"same"``,
    ``"valid"`` or the zeros added on each side); 0 or less when the kernel does not fit."""
    if padding == "same":
        return -(-size // stride)
    return (size + 2 * (0 if padding == "valid" else padding) - kernel) // stride + 1


def check_conv_input(container: "Container", spatial: Sequence[int], layout: str, default_padding: Any) -> None:
    """Raise a :class:`NetworkInputError` naming the container, the layer, its kernel and the spatial size it gets
    when a ``conv2d`` layer of ``container`` does not fit its input (an image of ``spatial`` = (height, width)).

    :param layout: how the backend's convolutions take images, for the fix (``"(batch, height, width, channels)"``).
    :param default_padding: the backend's padding where a layer gives none (torch: ``"valid"``, flax: ``"same"``).
    """
    spatial = tuple(int(size) for size in spatial)
    for index, layer in enumerate(container.layers):
        if layer.kind == "flatten":
            return
        if layer.kind != "conv2d":
            continue
        options = layer.options
        kernel, stride = _per_dimension(options["kernel_size"]), _per_dimension(options.get("stride", 1))
        padding = options.get("padding", default_padding)
        paddings = (padding, padding) if isinstance(padding, (int, str)) else tuple(padding)
        output = tuple(map(conv_output_size, spatial, kernel, stride, paddings))
        if min(output) < 1:
            raise NetworkInputError(
                f"Network container {container.name!r}: its conv2d layer {index} (kernel_size {kernel}, stride "
                f"{stride}, padding {padding!r}) gets an input of spatial size {spatial} (height, width), smaller than "
                f"its kernel: convolutions take {layout} images here; give the container an image that large (check "
                "its input's permute), or use a smaller kernel_size or padding 'same'"
            )
        spatial = output


@dataclass
class Container:
    """A parsed container: ``<name> = <name>_container(<input>)``.

    :param name: container name (a Python identifier; later expressions read its output by this name).
    :param input: the parsed input expression.
    :param layers: the parsed layers, in order (an empty list is the identity); in a recurrent container, the
        layers after the recurrent one (only the final layer an output token embeds).
    :param recurrent: the recurrent layer a ``type: GRU|LSTM|RNN`` container runs first, else ``None``.
    """

    name: str
    input: Expression
    layers: list = field(default_factory=list)
    recurrent: "Recurrent | None" = None


@dataclass(frozen=True)
class Recurrent:
    """The recurrent layer of a container ``{name, input, type: GRU|LSTM|RNN, layers: [hidden_size], num_layers}``.

    :param kind: ``"GRU"``, ``"LSTM"`` or ``"RNN"`` (tanh).
    :param hidden_size: units of each layer (the single entry of ``layers``).
    :param num_layers: stacked layers.
    :param sequence_length: length ``L`` of the training sequences (``sequence_length`` key; 16 by default).
    """

    kind: str
    hidden_size: int
    num_layers: int = 1
    sequence_length: int = DEFAULT_SEQUENCE_LENGTH

    def sizes(self, num_envs: int) -> list:
        """Shapes of the hidden-state tensors for ``num_envs`` environments: one, two for LSTM (hidden, cell)."""
        return [(self.num_layers, num_envs, self.hidden_size)] * (2 if self.kind == "LSTM" else 1)

    def specification(self, num_envs: int) -> dict:
        """The ``{"rnn": {"sequence_length", "sizes"}}`` a recurrent model's ``get_specification()`` returns."""
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": self.sizes(num_envs)}}


def _positive_int(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Invalid {key} {value!r} in {where}: use a positive integer")
    return value


def _parse_recurrent(item: Mapping[str, Any], where: str) -> "Recurrent":
    kind = str(item["type"]).upper()
    if kind not in RECURRENT_TYPES:
        raise ValueError(
            f"Unknown type {item['type']!r} in {where}: a recurrent container's type is one of "
            f"{', '.join(RECURRENT_TYPES)} (other containers have no type)"
        )
    layers = item["layers"]
    if not isinstance(layers, (list, tuple)) or len(layers) != 1:
        raise ValueError(
            f"Invalid layers {layers!r} in {where}: a {kind} container takes one hidden size, e.g. layers: [64] "
            "(use num_layers to stack layers; put other layers in a container before or after it)"
        )
    if item.get("activations"):
        raise ValueError(f"{where} is a {kind} container: it takes no activations (its cell applies its own)")
    return Recurrent(
        kind,
        _positive_int(layers[0], "hidden size", where),
        _positive_int(item.get("num_layers", 1), "num_layers", where),
        _positive_int(item.get("sequence_length", DEFAULT_SEQUENCE_LENGTH), "sequence_length", where),
    )


def recurrent_container(containers: Sequence[Container]) -> Container | None:
    """The recurrent container of a network (there is at most one), or ``None`` for a feedforward one."""
    return next((container for container in containers if container.recurrent is not None), None)


@dataclass
class Output:
    """A parsed output expression.

    :param token: ``"ACTIONS"`` or ``"ONE"`` when a final linear layer of that size is needed, else ``None``.
    :param size: size token of the output (sizes the Gaussian ``log_std_parameter``); ``"ACTIONS"`` by default.
    :param expression: the expression to apply, or ``None`` when the output is the last container's output
        (through the final layer, if any) as it is.
    """

    token: str | None = None
    size: str = "ACTIONS"
    expression: Expression | None = None

    def final_layer(self) -> Layer | None:
        """The final linear layer the token asks for (``None`` without a token)."""
        return None if self.token is None else Layer("linear", {"features": self.token})


def _check_container_name(name: Any, seen: Sequence[str], index: int) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise ValueError(
            f"Invalid name {name!r} for network container {index}: use a Python identifier not starting with '_', "
            "such as 'net'"
        )
    if name in _RESERVED_NAMES or name.lower() in ACTIVATIONS:
        raise ValueError(f"Invalid name {name!r} for network container {index}: it is reserved by the network language")
    if name in seen:
        raise ValueError(f"Duplicate network container name {name!r} (container {index}): names must be unique")
    return name


def generate_containers(network: Any, output: Any, embed_output: bool = True) -> tuple[list[Container], Output]:
    """Parse and check a ``network`` list and its ``output`` expression.

    :param network: list of ``{"name", "input", "layers", "activations"}`` dicts, run in order.
    :param output: output expression (``"ACTIONS"``, ``"ONE"``, ``"2 * tanh(ACTIONS)"``, ``""``...).
    :param embed_output: append the final layer to the last container (single models: its parameters live
        there, as in skrl) rather than leave it to the caller (:meth:`Output.final_layer`, shared models).
    """
    if isinstance(network, Mapping) or not isinstance(network, (list, tuple)):
        raise ValueError(f"Invalid network {network!r}: use a list of containers ({{'name', 'input', 'layers'}} dicts)")
    if not network:
        raise ValueError(
            "The network is empty: define at least one container, e.g. {'name': 'net', 'input': 'OBSERVATIONS', "
            "'layers': [64, 64], 'activations': 'relu'}"
        )
    containers: list[Container] = []
    names: list[str] = []
    for index, item in enumerate(network):
        if not isinstance(item, Mapping):
            raise ValueError(f"Network container {index} must be a dict with name, input, layers, activations")
        unknown = set(item) - set(_CONTAINER_KEYS)
        if unknown:
            raise ValueError(
                f"Unknown key(s) {sorted(map(str, unknown))} in network container {index}: allowed keys are "
                f"{', '.join(_CONTAINER_KEYS)}"
            )
        for key in ("name", "input", "layers"):
            if key not in item:
                raise ValueError(f"Network container {index} has no {key!r} (e.g. 'input': 'OBSERVATIONS')")
        name = _check_container_name(item["name"], names, index)
        where = f"network container {name!r}"
        expression = parse_expression(item["input"], f"{where} input", names)
        if "type" in item:
            recurrent = _parse_recurrent(item, where)
            earlier = recurrent_container(containers)
            if earlier is not None:
                raise ValueError(
                    f"{where} is a second recurrent container (after {earlier.name!r}): a model holds one; use "
                    "num_layers to stack recurrent layers"
                )
            containers.append(Container(name, expression, [], recurrent))
            names.append(name)
            continue
        misplaced = [key for key in _RECURRENT_KEYS if key in item]
        if misplaced:
            raise ValueError(
                f"{where} has {', '.join(misplaced)} but no type: only recurrent containers (type: GRU, LSTM or RNN) "
                "take them"
            )
        if not isinstance(item["layers"], (list, tuple)):
            raise ValueError(f"Invalid layers {item['layers']!r} in {where}: use a list")
        layers = [parse_layer(layer, where) for layer in item["layers"]]
        for layer, activation in zip(layers, _expand_activations(item.get("activations"), len(layers), where)):
            layer.activation = None if layer.kind == "flatten" else activation  # nothing follows a flatten
        containers.append(Container(name, expression, layers))
        names.append(name)
    parsed_output = parse_output(output, names)
    if embed_output and parsed_output.token is not None:
        containers[-1].layers.append(parsed_output.final_layer())
    return containers, parsed_output


def parse_output(output: Any, container_names: Sequence[str]) -> Output:
    """Parse and check an output expression.

    :param output: the expression; ``""`` (or ``None``) means the last container's output as it is.
    :param container_names: the names it may read; the last one is the network's output.
    """
    if isinstance(output, (list, tuple)):
        raise NotImplementedError(f"Multiple outputs ({output!r}) are not supported: give a single output expression")
    if output is None or (isinstance(output, str) and not output.strip()):
        return Output()
    expression = parse_expression(output, "network output", container_names, is_output=True)
    token = next(iter(expression.tokens), None)
    if expression.tree in (Name(OUTPUT_KEY), Name(container_names[-1])):
        expression = None  # the last container (with the final layer embedded) is the output
    return Output(token, token or "ACTIONS", expression)


# --- whole model definitions ---------------------------------------------------------------------------------

# each mixin's name -> the class name skrl gives the generated model, and the mixin's options with their defaults
_GAUSSIAN_OPTIONS = {"clip_actions": False, "clip_log_std": True, "min_log_std": -20, "max_log_std": 2}
MODEL_TYPES = {
    "GaussianMixin": ("GaussianModel", {**_GAUSSIAN_OPTIONS, "reduction": "sum"}),
    "MultivariateGaussianMixin": ("MultivariateGaussianModel", _GAUSSIAN_OPTIONS),
    "DeterministicMixin": ("DeterministicModel", {"clip_actions": False}),
    "CategoricalMixin": ("CategoricalModel", {"unnormalized_log_prob": True}),
    "MultiCategoricalMixin": ("MultiCategoricalModel", {"unnormalized_log_prob": True, "reduction": "sum"}),
}
GAUSSIAN_TYPES = ("GaussianMixin", "MultivariateGaussianMixin")
_LOG_STD_OPTIONS = {"initial_log_std": 0, "fixed_log_std": False}


@dataclass
class ModelDefinition:
    """Everything an instantiator builds from: the parsed network plus the model's options.

    :param mixin: the mixin's name (``"GaussianMixin"``...).
    :param class_name: the model class name (``"GaussianModel"``...).
    :param mixin_options: keyword arguments of the mixin's ``__init__`` (``role`` aside).
    :param containers: the parsed containers.
    :param output: the parsed output.
    :param log_std: ``(initial_log_std, fixed_log_std)`` for Gaussian-type models, else ``None``.
    :param role: the role the mixin is initialised with (shared models; ``""`` otherwise).
    """

    mixin: str
    class_name: str
    mixin_options: dict
    containers: list
    output: Output
    log_std: tuple[float, bool] | None = None
    role: str = ""


def _mixin_name(name: Any) -> str:
    names = {mixin.lower(): mixin for mixin in MODEL_TYPES}
    if not isinstance(name, str) or name.lower() not in names:
        raise ValueError(f"Unknown mixin {name!r}: use one of {', '.join(MODEL_TYPES)}")
    return names[name.lower()]


def _model_options(mixin: str, parameters: Mapping[str, Any], where: str, extra_keys: Sequence[str] = ()) -> tuple:
    class_name, defaults = MODEL_TYPES[mixin]
    allowed = {*defaults, *(_LOG_STD_OPTIONS if mixin in GAUSSIAN_TYPES else ()), "network", "output", *extra_keys}
    unknown = set(parameters) - allowed
    if unknown:
        raise ValueError(
            f"Unknown key(s) {sorted(map(str, unknown))} in {where} ({mixin}): allowed keys are {', '.join(sorted(allowed))}"
        )
    options = {key: parameters.get(key, default) for key, default in defaults.items()}
    log_std = None
    if mixin in GAUSSIAN_TYPES:
        log_std = (float(parameters.get("initial_log_std", 0)), bool(parameters.get("fixed_log_std", False)))
    return class_name, options, log_std


def _resolve_legacy(parameters: Mapping[str, Any]) -> dict:
    """``parameters`` with its pre-1.3 keys converted into ``network``/``output`` (when no network is given)."""
    parameters = dict(parameters)  # never modify the caller's dict
    legacy = {key: parameters.pop(key) for key in LEGACY_PARAMETERS if key in parameters}
    if legacy and not parameters.get("network"):
        parameters["network"], parameters["output"] = convert_deprecated_parameters(legacy)
    return parameters


def parse_model(mixin: str, parameters: Mapping[str, Any], where: str = "the model parameters") -> ModelDefinition:
    """Parse the parameters of one single-role instantiator (the skrl 1.4 dict/YAML model format).

    :param mixin: the mixin's name, case-insensitive (``"GaussianMixin"``...).
    :param parameters: the mixin's options, ``initial_log_std``/``fixed_log_std`` (Gaussian types),
        ``network``, ``output`` and, when ``network`` is empty, the pre-1.3 parameters (``hiddens``...).
    :param where: what the parameters are, for error messages.
    """
    mixin = _mixin_name(mixin)
    parameters = _resolve_legacy(parameters)
    class_name, options, log_std = _model_options(mixin, parameters, where)
    containers, output = generate_containers(parameters.get("network", []), parameters.get("output", ""))
    return ModelDefinition(mixin, class_name, options, containers, output, log_std)


@dataclass
class SharedModelDefinition:
    """A trunk of containers shared by several roles, each with its own mixin, final layer and output.

    :param containers: the trunk (the first role's network; no final layer embedded).
    :param roles: one :class:`ModelDefinition` per role (their ``containers`` are the trunk).
    :param single_forward_pass: run the trunk once per (first role, second role) pair of calls.
    """

    containers: list
    roles: list
    single_forward_pass: bool = True


def parse_shared_model(
    structure: Sequence[Any], roles: Sequence[Any], parameters: Sequence[Any], single_forward_pass: bool = True
) -> SharedModelDefinition:
    """Parse the arguments of ``shared_model``.

    :param structure: the two mixin names, e.g. ``["GaussianMixin", "DeterministicMixin"]`` (case-insensitive).
    :param roles: the two role names, e.g. ``["policy", "value"]``.
    :param parameters: one dict per role: ``network`` (first role only: it defines the trunk), ``output``, the
        mixin's options and ``class`` (ignored, as written in YAML files).
    :param single_forward_pass: see :class:`SharedModelDefinition`.
    """
    if not (len(structure) == len(roles) == len(parameters) == 2):
        raise ValueError(
            f"shared_model needs exactly two entries in structure ({len(structure)}), roles ({len(roles)}) and "
            f"parameters ({len(parameters)})"
        )
    mixins = [_mixin_name(name) for name in structure]
    if mixins[0] == mixins[1]:
        raise ValueError(f"shared_model structure {list(structure)} repeats {mixins[0]}: use two different mixins")
    if all(mixin in GAUSSIAN_TYPES for mixin in mixins):
        raise ValueError("shared_model supports one Gaussian-type role: both would own 'log_std_parameter'")
    for role in roles:
        if not isinstance(role, str) or not role.isidentifier() or keyword.iskeyword(role):
            raise ValueError(f"Invalid role {role!r}: roles name attributes (<role>_layer), use identifiers")
    if roles[0] == roles[1]:
        raise ValueError(f"shared_model roles must differ, got {list(roles)}")
    for index, parameter in enumerate(parameters):
        if not isinstance(parameter, Mapping):
            raise ValueError(f"shared_model parameters[{index}] must be a dict, got {parameter!r}")
    resolved = [_resolve_legacy(parameter) for parameter in parameters]
    if not resolved[0].get("network"):
        raise ValueError("shared_model parameters[0] has no 'network': the first role defines the trunk")
    containers, first_output = generate_containers(resolved[0]["network"], resolved[0].get("output", ""), False)
    names = [container.name for container in containers]
    definitions = []
    for index, (mixin, role, parameter) in enumerate(zip(mixins, roles, resolved)):
        where = f"shared_model parameters for role {role!r}"
        class_name, options, log_std = _model_options(mixin, parameter, where, extra_keys=("class",))
        output = first_output if index == 0 else parse_output(parameter.get("output", ""), names)
        definitions.append(ModelDefinition(mixin, class_name, options, containers, output, log_std, role))
    return SharedModelDefinition(containers, definitions, bool(single_forward_pass))


# --- instantiator arguments and the pre-1.3 parameters -------------------------------------------------------


def instantiator_definition(
    function: str, mixin: str, parameters: Mapping[str, Any], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> ModelDefinition:
    """Parse what a single-role instantiator received (its own parameters and its ``*args, **kwargs``).

    :param function: the instantiator's name, for messages (``"gaussian_model"``).
    :param mixin: the mixin it builds.
    :param parameters: its named parameters (mixin options, ``network``, ``output``...).
    :param args: extra positional arguments (ignored with a warning, as skrl does).
    :param kwargs: extra keyword arguments: only the pre-1.3 parameters are accepted (``TypeError`` otherwise).
    """
    if args:
        logger.warning(f"{function}: extra positional arguments {args!r} are ignored")
    unknown = set(kwargs) - set(LEGACY_PARAMETERS)
    if unknown:
        raise TypeError(
            f"{function}() got unexpected keyword argument(s) {', '.join(sorted(unknown))}; besides its own "
            f"parameters it accepts only the legacy {', '.join(LEGACY_PARAMETERS)}"
        )
    return parse_model(mixin, {**parameters, **kwargs}, f"{function}()")


def convert_deprecated_parameters(parameters: Mapping[str, Any]) -> tuple[list, str]:
    """Convert pre-1.3 instantiator parameters into a ``(network, output)`` definition (with a warning).

    :param parameters: any of ``input_shape`` (default ``STATES``), ``hiddens``, ``hidden_activation`` (collapsed
        to one name when all are equal), ``output_shape`` (default ``ACTIONS``), ``output_activation``,
        ``output_scale``.
    :return: ``([{"name": "net", "input": ..., "layers": ..., "activations": ...}], output expression)``.
    """
    logger.warning(
        f"The instantiator parameters ({', '.join(parameters)}) are deprecated: use network=[...] and output=..."
    )
    activations = parameters.get("hidden_activation", [])
    if isinstance(activations, (list, tuple)) and activations and len(set(activations)) == 1:
        activations = activations[0]
    input_shape = parameters.get("input_shape", "STATES")
    network = [
        {
            "name": "net",
            "input": str(input_shape or "STATES"),
            "layers": list(parameters.get("hiddens", [])),
            "activations": activations,
        }
    ]
    output = str(parameters.get("output_shape", "ACTIONS"))
    output_activation = parameters.get("output_activation")
    if output_activation:
        output = f"{output_activation}({output})"
    output_scale = float(parameters.get("output_scale", 1.0))
    if output_scale != 1.0:
        output = f"{output_scale} * {output}"
    return network, output


# --- what a backend supplies ---------------------------------------------------------------------------------


class NetworkBackend:
    """A backend's layers, activations and tensor operations; walking a description is done here, once.

    Subclasses implement the tensor hooks (``linear``, ``conv2d``, ``flatten``, ``concatenate``, ``permute``,
    ``one_hot_encoding``) and fill ``activation_functions`` (name -> function). Instances hold no state, so a
    model keeps one and stays picklable.
    """

    #: name -> activation function (applied in expressions; also the layer after a layer unless overridden)
    activation_functions: Mapping[str, Callable] = {}
    #: how the tensor functions are written in readable model descriptions
    function_texts: Mapping[str, str] = {}

    def linear(self, features: int, bias: bool = True, in_features: int | None = None) -> Any:
        raise NotImplementedError

    def conv2d(self, features: int, kernel_size: Any, in_channels: int | None = None, **options: Any) -> Any:
        raise NotImplementedError

    def flatten(self, **options: Any) -> Any:
        raise NotImplementedError

    def activation_layer(self, name: str) -> Any:
        """The module applying activation ``name`` inside a container."""
        return self.activation_functions[name]

    def concatenate(self, parts: list) -> Any:
        raise NotImplementedError

    def permute(self, value: Any, dims: tuple) -> Any:
        raise NotImplementedError

    def one_hot_encoding(self, space: Any, value: Any) -> Any:
        raise NotImplementedError

    def layer_input(self, value: Any) -> Any:
        """``value`` as a container's layers take it (a backend casts e.g. integer observations to float)."""
        return value

    def container_input(self, container: Container) -> Any:
        """The expression tree of ``container``'s input (a backend may adapt a layout written for the other one)."""
        return container.input.tree

    # shared: layers from the description

    def build_layer(self, layer: Layer, num_observations: int | None, num_actions: int | None) -> list:
        """The modules of one layer (and of its activation), sizes resolved with the model's dimensions."""
        options = dict(layer.options)
        for name in ("features", "in_features", "in_channels"):
            if name in options:
                options[name] = get_num_units(options[name], num_observations, num_actions)
        modules = [{"linear": self.linear, "conv2d": self.conv2d, "flatten": self.flatten}[layer.kind](**options)]
        if layer.activation:
            modules.append(self.activation_layer(layer.activation))
        return modules

    def build_layers(self, layers: Sequence[Layer], num_observations: int | None, num_actions: int | None) -> list:
        """The modules of a container, in order."""
        return [module for layer in layers for module in self.build_layer(layer, num_observations, num_actions)]

    # shared: the forward computation

    def evaluate(self, node: Any, values: Mapping[str, Any]) -> Any:
        """Value of an expression tree over ``values`` (``states``, ``taken_actions``, the spaces, containers)."""
        if isinstance(node, (Name, Space)):
            return values[node.key]
        if isinstance(node, Constant):
            return node.value
        if isinstance(node, Binary):
            return _FUNCTIONS_BY_SYMBOL[node.symbol](
                self.evaluate(node.left, values), self.evaluate(node.right, values)
            )
        if isinstance(node, Unary):
            operand = self.evaluate(node.operand, values)
            return -operand if node.symbol == "-" else operand
        if isinstance(node, Index):
            return self.evaluate(node.value, values)[node.index]
        if isinstance(node, Concatenate):
            parts = [self.evaluate(part, values) for part in node.parts]
            if len({part.ndim for part in parts}) > 1:  # e.g. a (batch, 3, 4) observation and (batch, 2) actions
                parts = [_flat_rows(part) for part in parts]
            return self.concatenate(parts)
        if isinstance(node, Permute):
            return self.permute(self.evaluate(node.value, values), node.dims)
        if isinstance(node, OneHot):
            return self.one_hot_encoding(values[node.space.key], self.evaluate(node.value, values))
        if isinstance(node, Activation):
            return self.activation_functions[node.name](self.evaluate(node.value, values))
        raise TypeError(f"Unknown expression node {node!r}")

    def run_containers(self, containers: Sequence[Container], values: dict, call: Callable[[str, Any], Any]) -> Any:
        """Run the containers in order, storing each output in ``values`` under its name; return the last.

        :param call: ``call(name, x)`` runs the container ``name`` (the backend's module) on ``x``.
        """
        last = None
        for container in containers:
            value = self.evaluate(self.container_input(container), values)
            if isinstance(value, (dict, list, tuple)):
                raise NetworkInputError(
                    f"Network container {container.name!r}: its input {container.input.source!r} is a "
                    f"{type(value).__name__} of parts (the space is a Dict or Tuple), but a container takes one "
                    f"tensor: select a part (e.g. OBSERVATIONS['key'] or OBSERVATIONS[0]) or join the parts with "
                    f"concatenate([...])"
                )
            if container.layers and container.layers[0].kind == "linear" and value.ndim > 2:
                value = _flat_rows(value)  # a linear layer reads (batch, features): a 2-D observation's rows, joined
            values[container.name] = last = call(container.name, self.layer_input(value))
        return last

    def evaluate_output(self, output: Output, values: Mapping[str, Any], last: Any) -> Any:
        """The model output from the last container's (or final layer's) result ``last``."""
        if output.expression is None:
            return last
        return self.evaluate(output.expression.tree, {**values, OUTPUT_KEY: last})

    # shared: readable descriptions

    def expression_text(self, node: Any, names: Mapping[str, str]) -> str:
        """A readable form of an expression tree; ``names`` maps value keys to how they are shown."""
        if isinstance(node, (Name, Space)):
            return names.get(node.key, node.key)
        if isinstance(node, Constant):
            return repr(node.value)
        if isinstance(node, Binary):
            left, right = (self.expression_text(part, names) for part in (node.left, node.right))
            left = f"({left})" if isinstance(node.left, Binary) else left
            right = f"({right})" if isinstance(node.right, Binary) else right
            return f"{left} {node.symbol} {right}"
        if isinstance(node, Unary):
            operand = self.expression_text(node.operand, names)
            return f"{node.symbol}({operand})" if isinstance(node.operand, Binary) else f"{node.symbol}{operand}"
        if isinstance(node, Index):
            return f"{self.expression_text(node.value, names)}[{_index_text(node.index)}]"
        if isinstance(node, Concatenate):
            parts = ", ".join(self.expression_text(part, names) for part in node.parts)
            return self.function_texts["concatenate"].format(parts)
        if isinstance(node, Permute):
            return self.function_texts["permute"].format(self.expression_text(node.value, names), node.dims)
        if isinstance(node, OneHot):
            space = self.expression_text(node.space, names)
            return f"one_hot_encoding({space}, {self.expression_text(node.value, names)})"
        function = self.function_texts.get(node.name, node.name)
        return f"{function}({self.expression_text(node.value, names)})"


def _flat_rows(value: Any) -> Any:
    """``value`` (a torch tensor or JAX array) as ``(batch, features)``, as skrl's models see observations."""
    return value.reshape(value.shape[0], -1) if value.ndim > 2 else value


def _index_text(index: Any) -> str:
    if isinstance(index, tuple):
        return ", ".join(_index_text(item) for item in index)
    if isinstance(index, slice):
        parts = ["" if part is None else str(part) for part in (index.start, index.stop)]
        return ":".join(parts) + ("" if index.step is None else f":{index.step}")
    return "..." if index is Ellipsis else repr(index)
