"""The torch side of the network-definition language: its layers, activations and tensor operations.

Parsing and validation live in :mod:`skrl_like.core.network_definition` (shared with JAX); this module only
says how a parsed description becomes ``torch.nn`` modules and tensor operations.
"""

import re
from typing import Any

import gymnasium
import torch

from skrl_like.core.network_definition import (
    NetworkBackend,
    Shape,
    convert_deprecated_parameters,
    generate_containers,
    get_num_units,
)

__all__ = [
    "Shape",
    "one_hot_encoding",
    "generate_containers",
    "get_num_units",
    "convert_deprecated_parameters",
    "TorchNetwork",
]


def one_hot_encoding(space: Any, x: torch.Tensor) -> torch.Tensor:
    """One-hot encode tensorized ``Discrete`` / ``MultiDiscrete`` values (networks need real-valued inputs).

    :param space: the gymnasium space the values come from.
    :param x: ``(batch, 1)`` indices for ``Discrete``, ``(batch, K)`` for ``MultiDiscrete``.
    :return: float32 ``(batch, n)`` or the concatenation of the components' one-hots ``(batch, sum(nvec))``.
    """
    if isinstance(space, gymnasium.spaces.Discrete):
        return torch.nn.functional.one_hot(x.reshape(x.shape[0], -1)[:, 0].long(), num_classes=int(space.n)).float()
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        sizes = [int(size) for size in space.nvec.reshape(-1)]
        flat = x.reshape(x.shape[0], -1).long()
        return torch.cat(
            [torch.nn.functional.one_hot(flat[:, i], num_classes=size) for i, size in enumerate(sizes)], dim=1
        ).float()
    raise ValueError(f"one_hot_encoding supports Discrete and MultiDiscrete spaces, not {space!r}")


def _softmax_last(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


class TorchNetwork(NetworkBackend):
    """``torch.nn`` layers (lazy unless the input size is given), activations and tensor operations."""

    activation_functions = {
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
    activation_modules = {
        "relu": torch.nn.ReLU,
        "tanh": torch.nn.Tanh,
        "sigmoid": torch.nn.Sigmoid,
        "leaky_relu": torch.nn.LeakyReLU,
        "elu": torch.nn.ELU,
        "softplus": torch.nn.Softplus,
        "softsign": torch.nn.Softsign,
        "selu": torch.nn.SELU,
        "softmax": lambda: torch.nn.Softmax(dim=-1),
    }
    function_texts = {"concatenate": "torch.cat([{}], dim=1)", "permute": "torch.permute({}, {})"}

    def linear(self, features: int, bias: bool = True, in_features: int | None = None) -> torch.nn.Module:
        if in_features is None:
            return torch.nn.LazyLinear(out_features=features, bias=bias)
        return torch.nn.Linear(in_features=in_features, out_features=features, bias=bias)

    def conv2d(self, features: int, kernel_size: Any, in_channels: int | None = None, **options: Any) -> Any:
        if in_channels is None:
            return torch.nn.LazyConv2d(out_channels=features, kernel_size=kernel_size, **options)
        return torch.nn.Conv2d(in_channels=in_channels, out_channels=features, kernel_size=kernel_size, **options)

    def flatten(self, **options: Any) -> torch.nn.Module:
        return torch.nn.Flatten(**options)

    def activation_layer(self, name: str) -> torch.nn.Module:
        return self.activation_modules[name]()

    def concatenate(self, parts: list) -> torch.Tensor:
        return torch.cat(parts, dim=1)

    def permute(self, value: torch.Tensor, dims: tuple) -> torch.Tensor:
        return torch.permute(value, dims)

    def one_hot_encoding(self, space: Any, value: torch.Tensor) -> torch.Tensor:
        return one_hot_encoding(space, value)

    def layer_input(self, value: torch.Tensor) -> torch.Tensor:
        # Discrete observations are stored as integer indices; layers take them as numbers, as flax's do
        return value if value.is_floating_point() else value.to(torch.get_default_dtype())

    def layer_text(self, layer: Any) -> list[str]:
        """Readable constructor calls of a layer and its activation, as skrl's generated source has them."""
        options = dict(layer.options)
        if layer.kind == "linear":
            options["out_features"] = options.pop("features")
            name = "nn.Linear" if "in_features" in options else "nn.LazyLinear"
        elif layer.kind == "conv2d":
            options["out_channels"] = options.pop("features")
            name = "nn.Conv2d" if "in_channels" in options else "nn.LazyConv2d"
        else:
            name = "nn.Flatten"
        sizes = {"in_features", "out_features", "in_channels", "out_channels"}
        texts = [f"{key}={_size_text(value) if key in sizes else repr(value)}" for key, value in options.items()]
        lines = [f"{name}({', '.join(texts)})"]
        if layer.activation:
            lines.append(f"nn.{self.activation_modules[layer.activation]().__class__.__name__}()")
        return lines


def _size_text(value: Any) -> str:
    # "num_actions" -> "self.num_actions", numbers as they are
    return re.sub(r"\bnum_", "self.num_", str(get_num_units(value)))
