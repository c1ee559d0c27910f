"""The network-definition language shared by the JAX model instantiators.

A definition is data (a list of containers and an output expression, usually from YAML). skrl compiles it to
Python source and ``exec``s it; skrl_like never evaluates user text. Expressions are parsed with ``ast`` and
walked over an allow-list (tokens, earlier container names, numbers, indexing, arithmetic and a few named
functions), producing small closures; layers are validated dictionaries turned directly into flax modules.
Anything outside the language raises ``ValueError`` while the model is being built, not when it first runs.
"""

import ast
import copy
import enum
import keyword
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp

from skrl_like._logging import logger

__all__ = ["Shape", "one_hot_encoding", "generate_containers", "get_num_units", "convert_deprecated_parameters"]


class Shape(enum.Enum):
    """Legacy (pre-1.3) size tokens; ``str(Shape.X)`` forms such as ``"Shape.STATES"`` are understood."""

    ONE = 1
    STATES = 0
    OBSERVATIONS = 0  # alias of STATES
    ACTIONS = -1
    STATES_ACTIONS = -2


ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "relu": nn.relu,
    "tanh": nn.tanh,
    "sigmoid": nn.sigmoid,
    "leaky_relu": nn.leaky_relu,
    "elu": nn.elu,
    "softplus": nn.softplus,
    "softsign": nn.soft_sign,
    "selu": nn.selu,
    "softmax": nn.softmax,
}

# size tokens usable for layer sizes and as output tokens
_SIZE_TOKENS = ("ONE", "STATES", "OBSERVATIONS", "ACTIONS", "STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
_OUTPUT_TOKENS = ("ACTIONS", "ONE")
_INPUT_TOKENS = ("STATES", "OBSERVATIONS", "ACTIONS", "STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
_SPACE_TOKENS = ("OBSERVATION_SPACE", "ACTION_SPACE")
_FUNCTIONS = ("concatenate", "permute", "one_hot_encoding")
_RESERVED = set(_SIZE_TOKENS) | set(_SPACE_TOKENS) | set(_FUNCTIONS) | set(ACTIVATIONS) | {"STATE_SPACE", "Shape"}
_MAX_EXPRESSION_LENGTH = 1000
_MAX_EXPONENT = 64


def _strip_shape(token: Any) -> str:
    return str(token).strip().removeprefix("Shape.")


def one_hot_encoding(space: gymnasium.Space, x: jax.Array) -> jax.Array:
    """One-hot encode discrete observations: ``Discrete(n)`` -> ``(batch, n)``; ``MultiDiscrete`` -> concatenated
    one-hots of every column. Other spaces raise ``ValueError``."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return jax.nn.one_hot(jnp.reshape(x, (jnp.shape(x)[0], -1))[:, 0], int(space.n), dtype=jnp.float32)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        columns = jnp.reshape(x, (jnp.shape(x)[0], -1))
        sizes = [int(size) for size in space.nvec.reshape(-1)]
        return jnp.concatenate(
            [jax.nn.one_hot(columns[:, index], size, dtype=jnp.float32) for index, size in enumerate(sizes)], axis=-1
        )
    raise ValueError(f"one_hot_encoding supports Discrete and MultiDiscrete spaces, not {space!r}")


def get_num_units(token: Any, num_observations: int | None = None, num_actions: int | None = None) -> Union[int, str]:
    """Size named by a token (``ONE``, ``STATES``/``OBSERVATIONS``, ``ACTIONS``, ``STATES_ACTIONS``, optionally
    prefixed ``Shape.``) or an int. With the model's sizes given the result is an int; without, a readable
    description such as ``"num_actions"``."""
    if isinstance(token, bool):
        raise ValueError(f"Invalid number of units {token!r}: use a positive int or a size token")
    if isinstance(token, int):
        return token
    name = _strip_shape(token)
    described = {
        "ONE": "1",
        "STATES": "num_observations",
        "OBSERVATIONS": "num_observations",
        "ACTIONS": "num_actions",
        "STATES_ACTIONS": "num_observations + num_actions",
        "OBSERVATIONS_ACTIONS": "num_observations + num_actions",
    }
    if name not in described:
        raise ValueError(f"Invalid number of units {token!r}: use a positive int or one of {', '.join(_SIZE_TOKENS)}")
    if num_observations is None and num_actions is None:
        return described[name]
    sizes = {
        "ONE": 1,
        "STATES": num_observations,
        "OBSERVATIONS": num_observations,
        "ACTIONS": num_actions,
        "STATES_ACTIONS": (num_observations or 0) + (num_actions or 0),
        "OBSERVATIONS_ACTIONS": (num_observations or 0) + (num_actions or 0),
    }
    return int(sizes[name])


# ------------------------------------------------------------------------------------------ expressions


class Expression:
    """A parsed input or output expression, evaluated against a dict of named values.

    :param source: the expression text, e.g. ``"concatenate([features, ACTIONS])"``.
    :param kind: ``"input"`` (``ACTIONS`` means the taken actions) or ``"output"`` (``ACTIONS``/``ONE`` mean the
        result of the final layer).
    :param known_names: container names the expression may reference.
    """

    def __init__(self, source: str, kind: str, known_names: Sequence[str]) -> None:
        self.source = str(source).strip()
        self.kind = kind
        self._known_names = set(known_names)
        self.tokens: set[str] = set()
        self.names: set[str] = set()
        if not self.source:
            raise ValueError(f"Empty {kind} expression: write e.g. 'OBSERVATIONS'")
        if len(self.source) > _MAX_EXPRESSION_LENGTH:
            raise ValueError(f"The {kind} expression is longer than {_MAX_EXPRESSION_LENGTH} characters")
        try:
            tree = ast.parse(self.source, mode="eval")
        except SyntaxError as error:
            raise ValueError(f"Invalid {kind} expression {self.source!r}: {error.msg}") from None
        except (RecursionError, MemoryError):
            raise ValueError(f"The {kind} expression {self.source!r} is nested too deeply") from None
        self.tree = tree.body
        self._evaluate = self._compile(tree.body)

    def __call__(self, values: Mapping[str, Any]) -> Any:
        return self._evaluate(values)

    def is_single_name(self) -> str | None:
        """The token or container name if the whole expression is just that, else ``None``."""
        node = self.tree
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Shape":
            return node.attr
        return None

    def _error(self, node: ast.AST, reason: str) -> ValueError:
        text = ast.get_source_segment(self.source, node) or type(node).__name__
        return ValueError(f"Invalid {self.kind} expression {self.source!r}: {reason} (at {text!r})")

    def _compile(self, node: ast.AST) -> Callable[[Mapping[str, Any]], Any]:
        if isinstance(node, ast.Name):
            return self._compile_name(node, node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "Shape":
                return self._compile_name(node, node.attr)
            raise self._error(node, "attribute access is not allowed (only Shape.<TOKEN>)")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)):
                value = node.value
                return lambda values: value
            raise self._error(node, "only numbers are allowed as constants here")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self._compile(node.operand)
            if isinstance(node.op, ast.USub):
                return lambda values: -operand(values)
            return operand
        if isinstance(node, ast.BinOp):
            return self._compile_binary(node)
        if isinstance(node, ast.Subscript):
            target = self._compile(node.value)
            index = self._compile_index(node.slice)
            return lambda values: target(values)[index]
        if isinstance(node, ast.Call):
            return self._compile_call(node)
        raise self._error(
            node,
            f"{type(node).__name__} is not part of the network language (use tokens, container names, numbers, "
            "indexing, + - * / **, concatenate, permute, one_hot_encoding and activation functions)",
        )

    def _compile_name(self, node: ast.AST, name: str) -> Callable[[Mapping[str, Any]], Any]:
        if name == "STATE_SPACE":
            raise self._error(node, "STATE_SPACE is not defined on models; use OBSERVATION_SPACE")
        if self.kind == "output" and name in _OUTPUT_TOKENS:
            self.tokens.add(name)
            return lambda values: values["__output__"]
        if name in ("STATES", "OBSERVATIONS"):
            return lambda values: values["states"]
        if name == "ACTIONS":
            return lambda values: values["taken_actions"]
        if name in ("STATES_ACTIONS", "OBSERVATIONS_ACTIONS"):
            return lambda values: jnp.concatenate([values["states"], values["taken_actions"]], axis=-1)
        if name == "OBSERVATION_SPACE":
            return lambda values: values["observation_space"]
        if name == "ACTION_SPACE":
            return lambda values: values["action_space"]
        if name in self._known_names:
            self.names.add(name)
            return lambda values: values[name]
        known = sorted(self._known_names)
        raise self._error(
            node,
            f"unknown name {name!r} (use a token like OBSERVATIONS/ACTIONS or an earlier container: {known})",
        )

    def _compile_binary(self, node: ast.BinOp) -> Callable[[Mapping[str, Any]], Any]:
        operators = {
            ast.Add: lambda a, b: a + b,
            ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: a / b,
            ast.Pow: lambda a, b: a**b,
        }
        operator = operators.get(type(node.op))
        if operator is None:
            raise self._error(node, f"operator {type(node.op).__name__} is not allowed (use + - * / **)")
        if isinstance(node.op, ast.Pow):
            # a literal, bounded exponent: arbitrary exponents of Python ints could take unbounded time
            exponent = node.right
            if isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, ast.USub):
                exponent = exponent.operand
            if not (isinstance(exponent, ast.Constant) and isinstance(exponent.value, (int, float))):
                raise self._error(node, "the exponent of ** must be a number literal")
            if abs(exponent.value) > _MAX_EXPONENT:
                raise self._error(node, f"the exponent of ** must be at most {_MAX_EXPONENT} in magnitude")
        left, right = self._compile(node.left), self._compile(node.right)
        return lambda values: operator(left(values), right(values))

    def _compile_index(self, node: ast.AST) -> Any:
        """Indices are literal (ints, slices of ints, strings for dict spaces, ``None``, ``...``)."""
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, str)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self._compile_index(node.operand)
            if isinstance(value, int):
                return -value
        if isinstance(node, ast.Slice):
            parts = [
                None if part is None else self._compile_index(part) for part in (node.lower, node.upper, node.step)
            ]
            if all(part is None or isinstance(part, int) for part in parts):
                return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._compile_index(element) for element in node.elts)
        raise self._error(node, "indices must be literal ints, slices, strings, None or ...")

    def _compile_call(self, node: ast.Call) -> Callable[[Mapping[str, Any]], Any]:
        if not isinstance(node.func, ast.Name):
            raise self._error(node, "only calls of concatenate, permute, one_hot_encoding or activations are allowed")
        name = node.func.id
        if node.keywords:
            raise self._error(node, f"{name}() takes positional arguments only")
        arguments = node.args
        if name == "concatenate":
            if len(arguments) != 1 or not isinstance(arguments[0], (ast.List, ast.Tuple)):
                raise self._error(node, "use concatenate([a, b, ...])")
            parts = [self._compile(element) for element in arguments[0].elts]
            return lambda values: jnp.concatenate([part(values) for part in parts], axis=-1)
        if name == "permute":
            if len(arguments) != 2 or not isinstance(arguments[1], (ast.List, ast.Tuple)):
                raise self._error(node, "use permute(x, (0, 3, 1, 2))")
            target = self._compile(arguments[0])
            dims = self._compile_index(ast.Tuple(elts=arguments[1].elts))
            if not all(isinstance(dim, int) for dim in dims):
                raise self._error(node, "permute dimensions must be ints")
            return lambda values: jnp.permute_dims(target(values), dims)
        if name == "one_hot_encoding":
            if len(arguments) != 2:
                raise self._error(node, "use one_hot_encoding(OBSERVATION_SPACE, OBSERVATIONS)")
            space, target = self._compile(arguments[0]), self._compile(arguments[1])
            return lambda values: one_hot_encoding(space(values), target(values))
        if name.lower() in ACTIVATIONS:
            if len(arguments) != 1:
                raise self._error(node, f"{name}() takes one argument")
            function, target = ACTIVATIONS[name.lower()], self._compile(arguments[0])
            return lambda values: function(target(values))
        raise self._error(node, f"unknown function {name!r}")

    def describe(self, replacements: Mapping[str, str]) -> str:
        """The expression as text with tokens replaced (for readable model descriptions)."""

        functions = {name: f"nn.{function.__name__}" for name, function in ACTIVATIONS.items()}
        functions.update(concatenate="jnp.concatenate", permute="jnp.permute_dims")

        class Replace(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.AST:
                return ast.Name(id=replacements.get(node.id, node.id), ctx=node.ctx)

            def visit_Call(self, node: ast.Call) -> ast.AST:
                self.generic_visit(node)
                if isinstance(node.func, ast.Name) and node.func.id.lower() in functions:
                    node.func = ast.Name(id=functions[node.func.id.lower()], ctx=ast.Load())
                return node

            def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
                if isinstance(node.value, ast.Name) and node.value.id == "Shape":
                    return ast.Name(id=replacements.get(node.attr, node.attr), ctx=node.ctx)
                return self.generic_visit(node)

        return ast.unparse(Replace().visit(copy.deepcopy(self.tree)))


# ------------------------------------------------------------------------------------------ layers


@dataclass(frozen=True)
class LayerSpec:
    """One validated layer: ``kind`` is ``"linear"``, ``"conv2d"``, ``"flatten"`` or ``"activation"``."""

    kind: str
    options: tuple = ()

    def build(self, num_observations: int | None, num_actions: int | None) -> Any:
        """The flax module (or function) for this layer, sizes resolved with the model's dimensions."""
        options = dict(self.options)
        if self.kind == "linear":
            features = get_num_units(options["features"], num_observations, num_actions)
            return nn.Dense(features=features, use_bias=options.get("use_bias", True))
        if self.kind == "conv2d":
            features = get_num_units(options["features"], num_observations, num_actions)
            kwargs = {key: value for key, value in options.items() if key != "features"}
            return nn.Conv(features=features, **kwargs)
        if self.kind == "flatten":
            return _flatten
        return ACTIVATIONS[options["name"]]

    def describe(self) -> str:
        options = dict(self.options)
        if self.kind == "linear":
            bias = "" if options.get("use_bias", True) else ", use_bias=False"
            return f"nn.Dense({get_num_units(options['features'])}{bias})"
        if self.kind == "conv2d":
            rest = "".join(f", {key}={value!r}" for key, value in options.items() if key != "features")
            return f"nn.Conv({get_num_units(options['features'])}{rest})"
        if self.kind == "flatten":
            return "flatten"
        return f"nn.{ACTIVATIONS[options['name']].__name__}"


def _flatten(x: jax.Array) -> jax.Array:
    return jnp.reshape(x, (jnp.shape(x)[0], -1))


def _size_option(value: Any, where: str) -> Union[int, str]:
    if isinstance(value, bool) or not isinstance(value, (int, str, Shape)):
        raise ValueError(f"{where}: the size must be a positive int or a size token, got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"{where}: the size must be positive, got {value}")
        return value
    get_num_units(value)  # validates the token
    return _strip_shape(value)


def _bool_option(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where}: bias must be true or false, got {value!r}")
    return value


def _ints_option(value: Any, where: str, name: str) -> Union[int, tuple]:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        return tuple(value)
    raise ValueError(f"{where}: {name} must be a positive int or a list of them, got {value!r}")


def _keyword_options(value: Any, layer: str, positional: Sequence[str], aliases: Mapping[str, str]) -> dict:
    """Positional (list) or keyword (dict) layer arguments, with torch/flax names mapped to one name."""
    where = f"layer {{{layer!r}: {value!r}}}"
    if isinstance(value, (list, tuple)):
        if len(value) > len(positional):
            raise ValueError(f"{where}: at most {len(positional)} positional arguments ({', '.join(positional)})")
        return dict(zip(positional, value))
    if isinstance(value, Mapping):
        options = {}
        for key, item in value.items():
            if key not in aliases:
                raise ValueError(f"{where}: unknown argument {key!r} (use {', '.join(sorted(aliases))})")
            options[aliases[key]] = item
        return options
    return {positional[0]: value}


def _parse_layer(layer: Any) -> LayerSpec:
    if isinstance(layer, bool):
        raise ValueError(f"Invalid layer {layer!r}: use a number of units, 'flatten' or a one-key dict")
    if isinstance(layer, int):
        return LayerSpec("linear", (("features", _size_option(layer, f"layer {layer!r}")),))
    if isinstance(layer, str):  # any bare string is a flatten layer (skrl behaviour)
        return LayerSpec("flatten")
    if isinstance(layer, Mapping) and len(layer) == 1:
        ((kind, value),) = layer.items()
        kind = str(kind).lower()
        where = f"layer {{{kind!r}: {value!r}}}"
        if kind == "linear":
            options = _keyword_options(
                value,
                kind,
                ("features", "use_bias"),
                {
                    "out_features": "features",
                    "features": "features",
                    "bias": "use_bias",
                    "use_bias": "use_bias",
                    "in_features": "in_features",
                },
            )
            options.pop("in_features", None)  # flax infers input sizes
            if "features" not in options:
                raise ValueError(f"{where}: the number of output features is missing")
            checked = {"features": _size_option(options["features"], where)}
            if "use_bias" in options:
                checked["use_bias"] = _bool_option(options["use_bias"], where)
            return LayerSpec("linear", tuple(checked.items()))
        if kind == "conv2d":
            options = _keyword_options(
                value,
                kind,
                ("features", "kernel_size", "strides", "padding", "use_bias"),
                {
                    "out_channels": "features",
                    "features": "features",
                    "kernel_size": "kernel_size",
                    "stride": "strides",
                    "strides": "strides",
                    "padding": "padding",
                    "bias": "use_bias",
                    "use_bias": "use_bias",
                    "in_channels": "in_channels",
                },
            )
            options.pop("in_channels", None)
            if "features" not in options or "kernel_size" not in options:
                raise ValueError(f"{where}: out_channels and kernel_size are required")
            kernel_size = _ints_option(options["kernel_size"], where, "kernel_size")
            checked: dict[str, Any] = {
                "features": _size_option(options["features"], where),
                # flax wants one size per spatial dimension
                "kernel_size": (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size,
            }
            if "strides" in options:
                checked["strides"] = _ints_option(options["strides"], where, "stride")
            if "padding" in options:
                padding = options["padding"]
                if isinstance(padding, str):
                    checked["padding"] = padding.upper()
                elif isinstance(padding, int) and not isinstance(padding, bool) and padding >= 0:
                    checked["padding"] = padding
                else:
                    raise ValueError(f"{where}: padding must be a string ('same', 'valid') or an int")
            if "use_bias" in options:
                checked["use_bias"] = _bool_option(options["use_bias"], where)
            return LayerSpec("conv2d", tuple(checked.items()))
        if kind == "flatten":
            return LayerSpec("flatten")  # JAX always flattens to (batch, -1)
        raise ValueError(f"Unknown layer type {kind!r}: use linear, conv2d or flatten")
    raise ValueError(
        f"Invalid layer {layer!r}: use a number of units, 'flatten' or a one-key dict like {{'linear': 64}}"
    )


def _expand_activations(activations: Any, num_layers: int, container: str) -> list[str | None]:
    if activations is None:
        return [None] * num_layers
    if isinstance(activations, str):
        return [activations] * num_layers
    if not isinstance(activations, (list, tuple)):
        raise ValueError(f"Container {container!r}: activations must be a name or a list of names")
    if not activations:
        return [None] * num_layers
    if len(activations) == 1:
        return [activations[0]] * num_layers
    if len(activations) == num_layers:
        return list(activations)
    raise NotImplementedError(
        f"Container {container!r}: {len(activations)} activations for {num_layers} layers "
        "(give one name, a one-element list or one name per layer)"
    )


def _activation_layer(name: Any, container: str) -> LayerSpec | None:
    if name is None:
        return None
    key = str(name).lower()
    if key not in ACTIVATIONS:
        logger.warning(f"Container {container!r}: unknown activation {name!r} skipped (use {', '.join(ACTIVATIONS)})")
        return None
    return LayerSpec("activation", (("name", key),))


# ------------------------------------------------------------------------------------------ containers


@dataclass
class Container:
    """A validated container: its name, parsed input expression and layers (activations included)."""

    name: str
    input: Expression
    layers: list[LayerSpec] = field(default_factory=list)


@dataclass
class OutputSpec:
    """The parsed output: the final-layer ``token`` (``"ACTIONS"``, ``"ONE"`` or ``None``), its size token
    ``size`` (default ``"ACTIONS"``) and the ``expression`` to apply (``None``: the last container's output)."""

    token: str | None
    size: str
    expression: Expression | None
    final_layer: LayerSpec | None = None


def generate_containers(
    network: Sequence[Mapping[str, Any]], output: Any, embed_output: bool = True
) -> tuple[list[Container], OutputSpec]:
    """Validate and parse a network definition.

    :param network: list of ``{"name", "input", "layers", "activations"}`` dicts, executed in order.
    :param output: output expression (``"ACTIONS"``, ``"ONE"``, ``"2 * tanh(ACTIONS)"``, ...).
    :param embed_output: append the final layer to the last container (its parameters then live there);
        otherwise it is returned in ``OutputSpec.final_layer``.
    :return: the containers and the output description.
    """
    if isinstance(network, Mapping) or not isinstance(network, (list, tuple)):
        raise ValueError("network must be a list of containers ({'name': ..., 'input': ..., 'layers': [...]})")
    if not network:
        raise ValueError(
            "network is empty: define at least one container, e.g. {'name': 'net', 'input': "
            "'OBSERVATIONS', 'layers': [64, 64], 'activations': 'relu'}"
        )
    containers: list[Container] = []
    for position, item in enumerate(network):
        if not isinstance(item, Mapping):
            raise ValueError(f"network[{position}] must be a dict with name, input, layers and activations")
        unknown = set(item) - {"name", "input", "layers", "activations"}
        if unknown:
            raise ValueError(
                f"network[{position}]: unknown keys {sorted(unknown)} (use name, input, layers, activations)"
            )
        name = item.get("name")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(
                f"network[{position}]: name must be a Python identifier not starting with '_', got {name!r}"
            )
        if name in _RESERVED or name.lower() in ACTIVATIONS:
            raise ValueError(f"network[{position}]: name {name!r} is reserved by the network language")
        if any(container.name == name for container in containers):
            raise ValueError(f"network[{position}]: duplicate container name {name!r}")
        if "input" not in item:
            raise ValueError(f"Container {name!r} has no input (e.g. 'input': 'OBSERVATIONS')")
        source = item["input"]
        if isinstance(source, Shape):
            source = str(source)
        if not isinstance(source, str):
            raise ValueError(f"Container {name!r}: input must be an expression string, got {source!r}")
        expression = Expression(source, "input", [container.name for container in containers])
        raw_layers = item.get("layers", [])
        if not isinstance(raw_layers, (list, tuple)):
            raise ValueError(f"Container {name!r}: layers must be a list")
        parsed = [_parse_layer(layer) for layer in raw_layers]
        activations = _expand_activations(item.get("activations", []), len(parsed), name)
        layers: list[LayerSpec] = []
        for layer, activation in zip(parsed, activations):
            layers.append(layer)
            if layer.kind != "flatten":  # no activation after a flatten layer
                activation_layer = _activation_layer(activation, name)
                if activation_layer is not None:
                    layers.append(activation_layer)
        containers.append(Container(name=name, input=expression, layers=layers))

    output_spec = _parse_output(output, [container.name for container in containers])
    if output_spec.token is not None:
        final_layer = LayerSpec("linear", (("features", output_spec.token),))
        if embed_output:
            containers[-1].layers.append(final_layer)
        else:
            output_spec.final_layer = final_layer
    return containers, output_spec


def _parse_output(output: Any, container_names: Sequence[str]) -> OutputSpec:
    if isinstance(output, (list, tuple)):
        raise NotImplementedError("Several outputs are not supported: give one output expression")
    if isinstance(output, Shape):
        output = str(output)
    if output is None or (isinstance(output, str) and not output.strip()):
        return OutputSpec(token=None, size="ACTIONS", expression=None)
    if not isinstance(output, str):
        raise ValueError(f"output must be an expression string, got {output!r}")
    expression = Expression(output, "output", container_names)
    if len(expression.tokens) > 1:
        raise ValueError(f"output {output!r} uses both ACTIONS and ONE: use one output token")
    token = next(iter(expression.tokens), None)
    single = expression.is_single_name()
    if single is not None and (single == token or single == container_names[-1]):
        expression = None  # the last container (with the final layer embedded) is the output
    return OutputSpec(token=token, size=token or "ACTIONS", expression=expression)


def convert_deprecated_parameters(parameters: Mapping[str, Any]) -> tuple[list[dict], str]:
    """Translate the pre-1.3 keyword arguments into a ``(network, output)`` definition.

    Understood keys: ``input_shape`` (default ``STATES``), ``hiddens``, ``hidden_activation`` (collapsed to one
    name when all equal), ``output_shape`` (default ``ACTIONS``), ``output_activation`` and ``output_scale``.
    """
    logger.warning("The 'input_shape', 'hiddens', ... parameters are deprecated: use 'network' and 'output'")
    input_shape = parameters.get("input_shape", Shape.STATES)
    hiddens = list(parameters.get("hiddens", []))
    activations = parameters.get("hidden_activation", [])
    if isinstance(activations, (list, tuple)) and activations and len(set(activations)) == 1:
        activations = activations[0]
    network = [{"name": "net", "input": str(input_shape or "STATES"), "layers": hiddens, "activations": activations}]
    output = str(parameters.get("output_shape", Shape.ACTIONS))
    output_activation = parameters.get("output_activation", "")
    if output_activation:
        output = f"{output_activation}({output})"
    output_scale = float(parameters.get("output_scale", 1.0))
    if output_scale != 1.0:
        output = f"{output_scale} * {output}"
    return network, output
