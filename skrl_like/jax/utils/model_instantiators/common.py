"""The JAX side of the network-definition language: its layers, activations and array operations.

Parsing and validation live in :mod:`skrl_like.core.network_definition` (shared with torch); this module only
says how a parsed description becomes flax modules and ``jax.numpy`` operations.
"""

from typing import Any

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp

from skrl_like.core.network_definition import (
    Container,
    NetworkBackend,
    NetworkInputError,
    Permute,
    Shape,
    check_conv_input,
    convert_deprecated_parameters,
    generate_containers,
    get_num_units,
)

# permute(x, (0, 3, 1, 2)) turns an NHWC image into torch's NCHW: what configs shared between backends (Isaac Lab's
# camera tasks) write before a conv2d container
_TO_CHANNELS_FIRST = (0, 3, 1, 2)

__all__ = [
    "Shape",
    "one_hot_encoding",
    "generate_containers",
    "get_num_units",
    "convert_deprecated_parameters",
    "JaxNetwork",
]


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


def starts_with_conv(container: Container) -> bool:
    """Whether the first layer of ``container`` is a convolution (its input must be an image)."""
    return bool(container.layers) and container.layers[0].kind == "conv2d"


def _flatten(x: jax.Array) -> jax.Array:
    return jnp.reshape(x, (jnp.shape(x)[0], -1))


def _pair(value: Any) -> Any:
    # flax wants one size per spatial dimension
    return (value, value) if isinstance(value, int) else value


class JaxNetwork(NetworkBackend):
    """flax layers (input sizes are always inferred), activation functions and ``jax.numpy`` operations."""

    activation_functions = {
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
    function_texts = {
        **{name: f"nn.{function.__name__}" for name, function in activation_functions.items()},
        "concatenate": "jnp.concatenate([{}], axis=-1)",
        "permute": "jnp.permute_dims({}, {})",
    }

    def linear(self, features: int, bias: bool = True, in_features: int | None = None) -> nn.Module:
        return nn.Dense(features=features, use_bias=bias)

    def conv2d(self, features: int, kernel_size: Any, in_channels: int | None = None, **options: Any) -> nn.Module:
        arguments = {"kernel_size": _pair(kernel_size), "use_bias": options.get("bias", True)}
        if "stride" in options:
            arguments["strides"] = _pair(options["stride"])
        if "padding" in options:
            padding = options["padding"]
            arguments["padding"] = padding.upper() if isinstance(padding, str) else padding
        return nn.Conv(features=features, **arguments)

    def flatten(self, **options: Any) -> Any:
        return _flatten  # JAX always flattens to (batch, -1)

    def concatenate(self, parts: list) -> jax.Array:
        return jnp.concatenate(parts, axis=-1)

    def permute(self, value: jax.Array, dims: tuple) -> jax.Array:
        return jnp.permute_dims(value, dims)

    def one_hot_encoding(self, space: Any, value: jax.Array) -> jax.Array:
        return one_hot_encoding(space, value)

    def container_input(self, container: Container) -> Any:
        """A conv2d container's input without the ``permute(x, (0, 3, 1, 2))`` written for torch: flax convolutions
        take NHWC images, the layout the observation already has (skrl's docs tell JAX users to leave it out)."""
        tree = container.input.tree
        if starts_with_conv(container) and isinstance(tree, Permute) and tuple(tree.dims) == _TO_CHANNELS_FIRST:
            return tree.value
        return tree

    def check_container_input(self, container: Container, value: jax.Array) -> None:
        """Name the container, its kernel and its input's size where a conv2d layer cannot take the input (flax
        would build a layer of zero features and fail with a ``ZeroDivisionError`` in its initializer)."""
        if not starts_with_conv(container):
            return
        if jnp.ndim(value) != 4:
            raise NetworkInputError(
                f"Network container {container.name!r}: its conv2d layers take (batch, height, width, channels) "
                f"images in JAX, but its input {container.input.source!r} has shape {tuple(jnp.shape(value))}: give "
                "it an image observation (a Box space of shape (height, width, channels))"
            )
        check_conv_input(container, jnp.shape(value)[1:3], "(batch, height, width, channels)", "same")

    def layer_text(self, layer: Any) -> list[str]:
        """Readable forms of a layer and its activation."""
        options = dict(layer.options)
        if layer.kind == "linear":
            bias = "" if options.get("bias", True) else ", use_bias=False"
            texts = [f"nn.Dense({get_num_units(options['features'])}{bias})"]
        elif layer.kind == "conv2d":
            rest = "".join(
                f", {key}={value!r}" for key, value in options.items() if key not in ("features", "in_channels")
            )
            texts = [f"nn.Conv({get_num_units(options['features'])}{rest})"]
        else:
            texts = ["flatten"]
        if layer.activation:
            texts.append(self.function_texts[layer.activation])
        return texts
