"""A small, safe evaluator for the input and output expressions of the network-definition language.

Expressions are parsed with :mod:`ast` and walked by hand over an allow-list of node types; each node becomes a
small callable object evaluated against an environment dict (``states``, ``taken_actions`` and the outputs of
the containers computed so far). Nothing is ever passed to ``eval``/``exec``, so a definition read from a YAML
file cannot run arbitrary code.
"""

import ast
import operator
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import gymnasium
import torch

# environment key under which a model stores the output of its final (token) layer; not an identifier, so it
# cannot collide with a container name
TOKEN_KEY = "<output layer>"


def _softmax_last(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def one_hot_encoding(space: Any, x: torch.Tensor) -> torch.Tensor:
    """One-hot encode tensorized ``Discrete`` / ``MultiDiscrete`` values (networks need real-valued inputs).

    :param space: the gymnasium space the values come from.
    :param x: ``(batch, 1)`` indices for ``Discrete``, ``(batch, K)`` for ``MultiDiscrete``.
    :return: float32 ``(batch, n)`` or the concatenation of the components' one-hots ``(batch, sum(nvec))``.
    """
    if isinstance(space, gymnasium.spaces.Discrete):
        return torch.nn.functional.one_hot(x[:, 0].long(), num_classes=int(space.n)).float()
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        sizes = [int(size) for size in space.nvec.reshape(-1)]
        flat = x.reshape(x.shape[0], -1).long()
        return torch.cat(
            [torch.nn.functional.one_hot(flat[:, i], num_classes=size) for i, size in enumerate(sizes)], dim=1
        ).float()
    raise ValueError(f"one_hot_encoding supports Discrete and MultiDiscrete spaces, not {space!r}")


ACTIVATION_FUNCTIONS: dict[str, Callable[..., torch.Tensor]] = {
    "relu": torch.nn.functional.relu,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "leaky_relu": torch.nn.functional.leaky_relu,
    "elu": torch.nn.functional.elu,
    "softplus": torch.nn.functional.softplus,
    "softsign": torch.nn.functional.softsign,
    "selu": torch.nn.functional.selu,
    "softmax": _softmax_last,
}
OPERATION_FUNCTIONS = ("concatenate", "permute", "one_hot_encoding")
OUTPUT_TOKENS = ("ACTIONS", "ONE")
_STATE_NAMES = ("STATES", "OBSERVATIONS", "states", "observations")
_ACTION_NAMES = ("ACTIONS", "taken_actions")
_PAIR_NAMES = ("STATES_ACTIONS", "OBSERVATIONS_ACTIONS")
_SPACE_NAMES = ("OBSERVATION_SPACE", "ACTION_SPACE")
_BINARY_OPERATORS = {
    ast.Add: (operator.add, "+"),
    ast.Sub: (operator.sub, "-"),
    ast.Mult: (operator.mul, "*"),
    ast.Div: (operator.truediv, "/"),
    ast.Pow: (operator.pow, "**"),
}
_UNARY_OPERATORS = {ast.USub: (operator.neg, "-"), ast.UAdd: (operator.pos, "+")}


# --- evaluation nodes (plain classes: picklable and deep-copyable, unlike closures) ----------------------------


class _Read:
    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, env: Mapping[str, Any]) -> Any:
        return env[self.key]


class _Constant:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, env: Mapping[str, Any]) -> Any:
        return self.value


class _Binary:
    def __init__(self, function: Callable[[Any, Any], Any], left: Callable, right: Callable) -> None:
        self.function, self.left, self.right = function, left, right

    def __call__(self, env: Mapping[str, Any]) -> Any:
        return self.function(self.left(env), self.right(env))


class _Unary:
    def __init__(self, function: Callable[[Any], Any], operand: Callable) -> None:
        self.function, self.operand = function, operand

    def __call__(self, env: Mapping[str, Any]) -> Any:
        return self.function(self.operand(env))


class _Index:
    def __init__(self, value: Callable, index: Any) -> None:
        self.value, self.index = value, index

    def __call__(self, env: Mapping[str, Any]) -> Any:
        return self.value(env)[self.index]


class _Concatenate:
    def __init__(self, parts: Sequence[Callable]) -> None:
        self.parts = list(parts)

    def __call__(self, env: Mapping[str, Any]) -> torch.Tensor:
        return torch.cat([part(env) for part in self.parts], dim=1)


class _Permute:
    def __init__(self, value: Callable, dims: tuple[int, ...]) -> None:
        self.value, self.dims = value, dims

    def __call__(self, env: Mapping[str, Any]) -> torch.Tensor:
        return torch.permute(self.value(env), self.dims)


class _OneHot:
    def __init__(self, space: Any, value: Callable) -> None:
        self.space, self.value = space, value

    def __call__(self, env: Mapping[str, Any]) -> torch.Tensor:
        return one_hot_encoding(self.space, self.value(env))


class _Activation:
    def __init__(self, name: str, value: Callable) -> None:
        self.name, self.value = name, value

    def __call__(self, env: Mapping[str, Any]) -> torch.Tensor:
        return ACTIVATION_FUNCTIONS[self.name](self.value(env))


# --- compilation -------------------------------------------------------------------------------------------


@dataclass
class CompiledExpression:
    """A parsed expression: its evaluator, a readable rewritten form and what it refers to.

    :param source: the expression as written by the user.
    :param evaluate: callable taking the environment dict and returning the value.
    :param text: readable rewritten form (``states``, ``torch.cat([...], dim=1)``, ``tanh(...)``...).
    :param tokens: output tokens used (``"ACTIONS"``/``"ONE"``; output expressions only).
    :param names: container names read.
    """

    source: str
    evaluate: Callable[[Mapping[str, Any]], Any]
    text: str
    tokens: frozenset
    names: frozenset


class _Compiler:
    def __init__(
        self,
        source: str,
        where: str,
        is_output: bool,
        container_names: Sequence[str],
        spaces: Mapping[str, Any],
        token_text: str,
    ) -> None:
        self.source = source
        self.where = where
        self.is_output = is_output
        self.container_names = list(container_names)
        self.spaces = spaces
        self.token_text = token_text
        self.tokens: set[str] = set()
        self.names: set[str] = set()

    def error(self, problem: str, allowed: str) -> ValueError:
        return ValueError(f"Invalid {self.where} {self.source!r}: {problem}; {allowed}")

    def allowed_names(self) -> str:
        names = list(_STATE_NAMES[:2]) + ["ACTIONS", *_PAIR_NAMES]
        if self.is_output:
            names.append("ONE")
        names += self.container_names
        return "allowed names: " + ", ".join(names) + " (also as Shape.<NAME>)"

    def allowed_functions(self) -> str:
        return "allowed functions: " + ", ".join([*OPERATION_FUNCTIONS, *ACTIVATION_FUNCTIONS])

    # each visit returns (evaluator, text)
    def visit(self, node: ast.AST) -> tuple[Callable, str]:
        if isinstance(node, ast.Name):
            return self.visit_name(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "Shape":
                return self.visit_name(node.attr)
            raise self.error(
                f"attribute access {ast.unparse(node)!r} is not allowed", "only Shape.<NAME> tokens may use a dot"
            )
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return _Constant(node.value), repr(node.value)
            raise self.error(f"constant {node.value!r} is not allowed here", "only numbers may appear as constants")
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY_OPERATORS:
                raise self.error(f"operator {type(node.op).__name__} is not allowed", "allowed operators: + - * / **")
            function, symbol = _BINARY_OPERATORS[type(node.op)]
            left, left_text = self.visit(node.left)
            right, right_text = self.visit(node.right)
            return _Binary(function, left, right), f"({left_text} {symbol} {right_text})"
        if isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY_OPERATORS:
                raise self.error(f"operator {type(node.op).__name__} is not allowed", "allowed unary operators: - +")
            function, symbol = _UNARY_OPERATORS[type(node.op)]
            operand, operand_text = self.visit(node.operand)
            return _Unary(function, operand), f"{symbol}{operand_text}"
        if isinstance(node, ast.Subscript):
            value, value_text = self.visit(node.value)
            index = self.static_index(node.slice)
            return _Index(value, index), f"{value_text}[{ast.unparse(node.slice)}]"
        if isinstance(node, ast.Call):
            return self.visit_call(node)
        raise self.error(
            f"{type(node).__name__} expressions ({ast.unparse(node)!r}) are not allowed",
            "use names, numbers, + - * / **, indexing with constants and the allowed functions",
        )

    def visit_name(self, name: str) -> tuple[Callable, str]:
        if self.is_output and name in OUTPUT_TOKENS:
            self.tokens.add(name)
            return _Read(TOKEN_KEY), self.token_text
        if name in _STATE_NAMES:
            return _Read("states"), "states"
        if name in _ACTION_NAMES:
            return _Read("taken_actions"), "taken_actions"
        if name in _PAIR_NAMES:
            return _Concatenate([_Read("states"), _Read("taken_actions")]), "torch.cat([states, taken_actions], dim=1)"
        if name in self.container_names:
            self.names.add(name)
            return _Read(name), name
        if name in _SPACE_NAMES:
            raise self.error(f"{name} can only be the first argument of one_hot_encoding", self.allowed_names())
        if name == "STATE_SPACE":
            raise self.error("STATE_SPACE is not defined on models", "use OBSERVATION_SPACE")
        raise self.error(f"unknown name {name!r}", self.allowed_names())

    def static_index(self, node: ast.AST) -> Any:
        # indexes are constants only, so they are computed once here
        if isinstance(node, ast.Constant) and (
            node.value is Ellipsis or isinstance(node.value, str) or type(node.value) is int
        ):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.static_index(node.operand)
            if type(operand) is int:
                return -operand
        if isinstance(node, ast.Slice):
            parts = [None if part is None else self.static_index(part) for part in (node.lower, node.upper, node.step)]
            if all(part is None or type(part) is int for part in parts):
                return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.static_index(element) for element in node.elts)
        raise self.error(
            f"index {ast.unparse(node)!r} is not allowed",
            "indexes must be integers, strings, slices of integers or ...",
        )

    def visit_call(self, node: ast.Call) -> tuple[Callable, str]:
        if not isinstance(node.func, ast.Name):
            raise self.error(f"call of {ast.unparse(node.func)!r} is not allowed", self.allowed_functions())
        name = node.func.id.lower()
        if name not in OPERATION_FUNCTIONS and name not in ACTIVATION_FUNCTIONS:
            raise self.error(f"unknown function {node.func.id!r}", self.allowed_functions())
        if node.keywords:
            raise self.error(f"{name} takes no keyword arguments", "pass its arguments by position")
        arguments = node.args
        if name == "concatenate":
            if len(arguments) != 1 or not isinstance(arguments[0], (ast.List, ast.Tuple)) or not arguments[0].elts:
                raise self.error("concatenate takes one list of expressions", "write concatenate([a, b, ...])")
            visited = [self.visit(element) for element in arguments[0].elts]
            text = ", ".join(element_text for _, element_text in visited)
            return _Concatenate([evaluator for evaluator, _ in visited]), f"torch.cat([{text}], dim=1)"
        if name == "permute":
            if len(arguments) != 2:
                raise self.error("permute takes a tensor and a tuple of dimensions", "write permute(x, (0, 3, 1, 2))")
            value, value_text = self.visit(arguments[0])
            dims = arguments[1]
            if not isinstance(dims, (ast.List, ast.Tuple)) or not all(
                isinstance(dim, ast.Constant) and type(dim.value) is int for dim in dims.elts
            ):
                raise self.error("permute dimensions must be a tuple of integers", "write permute(x, (0, 3, 1, 2))")
            dims_value = tuple(dim.value for dim in dims.elts)
            return _Permute(value, dims_value), f"torch.permute({value_text}, {dims_value})"
        if name == "one_hot_encoding":
            if len(arguments) != 2 or not (
                (isinstance(arguments[0], ast.Name) and arguments[0].id in _SPACE_NAMES)
                or (isinstance(arguments[0], ast.Attribute) and arguments[0].attr in _SPACE_NAMES)
            ):
                raise self.error(
                    "one_hot_encoding takes a space and a tensor",
                    "write one_hot_encoding(OBSERVATION_SPACE, OBSERVATIONS) or with ACTION_SPACE",
                )
            space_name = arguments[0].id if isinstance(arguments[0], ast.Name) else arguments[0].attr
            value, value_text = self.visit(arguments[1])
            space_text = "self.observation_space" if space_name == "OBSERVATION_SPACE" else "self.action_space"
            return _OneHot(self.spaces.get(space_name), value), f"one_hot_encoding({space_text}, {value_text})"
        # activation function
        if len(arguments) != 1:
            raise self.error(f"{name} takes exactly one argument", f"write {name}(x)")
        value, value_text = self.visit(arguments[0])
        return _Activation(name, value), f"{name}({value_text})"


def compile_expression(
    source: Any,
    *,
    where: str,
    is_output: bool,
    container_names: Sequence[str],
    spaces: Mapping[str, Any] | None = None,
    token_text: str = "output",
) -> CompiledExpression:
    """Parse and check an input or output expression; never executes user text.

    :param source: the expression (a string; ``Shape`` members are accepted through ``str``).
    :param where: what the expression is, for error messages (e.g. ``"input of container 'net'"``).
    :param is_output: output expressions treat ``ACTIONS``/``ONE`` as the final-layer token.
    :param container_names: names that may be referred to (containers defined before this point).
    :param spaces: ``{"OBSERVATION_SPACE": ..., "ACTION_SPACE": ...}`` for ``one_hot_encoding``.
    :param token_text: how the token is shown in the readable form.
    """
    text = str(source).strip()
    compiler = _Compiler(text, where, is_output, container_names, spaces or {}, token_text)
    if not text:
        raise compiler.error("the expression is empty", compiler.allowed_names())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        raise compiler.error(f"syntax error ({error.msg})", "write a Python-like expression") from None
    if isinstance(tree.body, (ast.List, ast.Tuple)) and is_output:
        raise NotImplementedError(f"Multiple outputs ({text!r}) are not supported: give a single output expression")
    evaluate, rewritten = compiler.visit(tree.body)
    if isinstance(tree.body, ast.BinOp):
        rewritten = rewritten[1:-1]  # outermost parentheses add nothing
    if len(compiler.tokens) > 1:
        raise compiler.error("it uses both ACTIONS and ONE", "an output has one final layer: use one token")
    return CompiledExpression(text, evaluate, rewritten, frozenset(compiler.tokens), frozenset(compiler.names))
