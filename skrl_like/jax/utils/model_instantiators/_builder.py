"""Builds model classes from parsed definitions, with no generated source and no ``exec``.

Each instantiator call creates a small subclass of ``_NetworkModel`` (mixin first) whose class attributes hold
the parsed definition and the mixin options. Class attributes, not constructor arguments, because flax
re-creates modules from their dataclass fields (observation/action space, device) inside ``apply``; the clone
must find the same definition.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import flax.linen as nn
import gymnasium
import jax.numpy as jnp

from skrl_like._logging import logger
from skrl_like.jax.models.base import Model
from skrl_like.jax.utils.model_instantiators.common import (
    Container,
    OutputSpec,
    convert_deprecated_parameters,
    generate_containers,
    get_num_units,
)

_LEGACY_KEYS = ("input_shape", "hiddens", "hidden_activation", "output_shape", "output_activation", "output_scale")


def _unflatten(space: Any, x: Any) -> Any:
    if x is None or not isinstance(space, gymnasium.Space):
        return x  # int/shape spaces carry no structure to restore
    from skrl_like.jax.utils.spaces import unflatten_tensorized_space  # written alongside; imported lazily

    return unflatten_tensorized_space(space, x)


class _NetworkModel(Model):
    """A model whose layers and forward computation come from a parsed network definition."""

    _containers: ClassVar[list[Container]] = []
    _output: ClassVar[OutputSpec | None] = None
    _mixin: ClassVar[Any] = None
    _mixin_kwargs: ClassVar[dict] = {}
    _log_std: ClassVar[tuple[float, bool] | None] = None  # (initial value, fixed) for Gaussian models

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Any = None,
        parent: Any = None,
        name: str | None = None,
    ) -> None:
        Model.__init__(self, observation_space, action_space, device, parent, name)
        type(self)._mixin.__init__(self, **type(self)._mixin_kwargs)

    def _output_size(self) -> int:
        return int(get_num_units(self._output.size, self.num_observations, self.num_actions))

    def setup(self) -> None:
        for container in self._containers:
            layers = [layer.build(self.num_observations, self.num_actions) for layer in container.layers]
            if layers:  # an empty container is the identity
                setattr(self, f"{container.name}_container", nn.Sequential(layers))
        if self._output.final_layer is not None:
            self.output_layer = self._output.final_layer.build(self.num_observations, self.num_actions)
        if self._log_std is not None:
            initial, fixed = self._log_std
            size = self._output_size()
            if fixed:
                self.log_std_parameter = jnp.full((size,), initial, dtype=jnp.float32)
            else:
                self.log_std_parameter = self.param(
                    "log_std_parameter", lambda _: jnp.full((size,), initial, dtype=jnp.float32)
                )

    def __call__(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        values: dict[str, Any] = {
            "states": _unflatten(self.observation_space, inputs.get("states")),
            "taken_actions": _unflatten(self.action_space, inputs.get("taken_actions")),
            "observation_space": self.observation_space,
            "action_space": self.action_space,
        }
        last = None
        for container in self._containers:
            x = container.input(values)
            if container.layers:
                x = getattr(self, f"{container.name}_container")(x)
            values[container.name] = last = x
        if self._output.final_layer is not None:
            last = self.output_layer(last)
        if self._output.expression is None:
            output = last
        else:
            output = self._output.expression({**values, "__output__": last})
        if self._log_std is not None:
            return output, self.log_std_parameter, {}
        return output, {}


def resolve_definition(network: Any, output: Any, kwargs: Mapping[str, Any]) -> tuple[Any, Any]:
    """Use the pre-1.3 keyword arguments when no ``network`` is given and some of them are present."""
    if not network and any(key in kwargs for key in _LEGACY_KEYS):
        return convert_deprecated_parameters(kwargs)
    unknown = set(kwargs) - set(_LEGACY_KEYS)
    if unknown:
        logger.warning(f"Ignored unknown model instantiator parameters: {sorted(unknown)}")
    return network, output


def build_model(
    class_name: str,
    mixin: type,
    mixin_kwargs: Mapping[str, Any],
    observation_space: Any,
    action_space: Any,
    device: Any,
    network: Any,
    output: Any,
    legacy: Mapping[str, Any],
    log_std: tuple[float, bool] | None = None,
    return_source: bool = False,
) -> Any:
    """Parse the definition, create the model class and return an instance (or its description)."""
    network, output = resolve_definition(network, output, legacy)
    containers, output_spec = generate_containers(network, output, embed_output=True)
    namespace = {
        "__init__": _NetworkModel.__init__,  # keep ours: flax would otherwise generate a dataclass __init__
        "__module__": __name__,
        "__qualname__": class_name,
        "_containers": containers,
        "_output": output_spec,
        "_mixin": mixin,
        "_mixin_kwargs": dict(mixin_kwargs),
        "_log_std": log_std,
    }
    if return_source:
        return describe(class_name, mixin, mixin_kwargs, containers, output_spec, log_std)
    model_class = type(class_name, (mixin, _NetworkModel), namespace)
    return model_class(observation_space=observation_space, action_space=action_space, device=device)


def describe(
    class_name: str,
    mixin: type,
    mixin_kwargs: Mapping[str, Any],
    containers: list[Container],
    output: OutputSpec,
    log_std: tuple[float, bool] | None,
) -> str:
    """A readable, Python-like description of the model (it is documentation: nothing executes it)."""
    options = ", ".join(f"{key}={value!r}" for key, value in mixin_kwargs.items())
    lines = [
        f"# {class_name}: built directly from the definition (no generated code is executed)",
        f"class {class_name}({mixin.__name__}, Model):",
        f"    # {mixin.__name__}.__init__(self, {options})",
        "    def setup(self):",
    ]
    for container in containers:
        if container.layers:
            layers = ", ".join(layer.describe() for layer in container.layers)
            lines.append(f"        self.{container.name}_container = nn.Sequential([{layers}])")
    if log_std is not None:
        size = get_num_units(output.size)
        if log_std[1]:
            lines.append(f"        self.log_std_parameter = jnp.full(({size},), {float(log_std[0])!r})")
        else:
            lines.append(
                f"        self.log_std_parameter = self.param('log_std_parameter', "
                f"lambda _: jnp.full(({size},), {float(log_std[0])!r}))"
            )
    lines += [
        "",
        "    def __call__(self, inputs, role):",
        "        states = unflatten_tensorized_space(self.observation_space, inputs.get('states'))",
        "        taken_actions = unflatten_tensorized_space(self.action_space, inputs.get('taken_actions'))",
    ]
    input_names = {
        "STATES": "states",
        "OBSERVATIONS": "states",
        "ACTIONS": "taken_actions",
        "STATES_ACTIONS": "concatenate([states, taken_actions])",
        "OBSERVATIONS_ACTIONS": "concatenate([states, taken_actions])",
        "OBSERVATION_SPACE": "self.observation_space",
        "ACTION_SPACE": "self.action_space",
    }
    for container in containers:
        expression = container.input.describe(input_names)
        call = f"self.{container.name}_container({expression})" if container.layers else expression
        lines.append(f"        {container.name} = {call}")
    last = containers[-1].name
    result = last if output.expression is None else output.expression.describe({"ACTIONS": last, "ONE": last})
    lines.append(f"        output = {result}")
    lines.append(
        "        return output, self.log_std_parameter, {}" if log_std is not None else "        return output, {}"
    )
    return "\n".join(lines) + "\n"
