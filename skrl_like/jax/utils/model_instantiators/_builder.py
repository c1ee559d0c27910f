"""Builds JAX model classes from parsed definitions, with no generated source and no ``exec``.

Each instantiator call creates a small subclass of ``_NetworkModel`` (mixin first) whose class attribute holds
the parsed definition. A class attribute, not a constructor argument, because flax re-creates modules from
their dataclass fields (observation/action space, device) inside ``apply``; the clone must find the same
definition.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import flax.linen as nn
import gymnasium
import jax.numpy as jnp

from skrl_like.core.network_definition import OUTPUT_KEY, ModelDefinition, get_num_units, recurrent_container
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, GaussianMixin, MultiCategoricalMixin
from skrl_like.jax.models.base import Model
from skrl_like.jax.models.recurrent import RecurrentLayer
from skrl_like.jax.utils.model_instantiators.common import JaxNetwork

MIXINS = {
    "GaussianMixin": GaussianMixin,
    "DeterministicMixin": DeterministicMixin,
    "CategoricalMixin": CategoricalMixin,
    "MultiCategoricalMixin": MultiCategoricalMixin,
}
NETWORK = JaxNetwork()


def _unflatten(space: Any, x: Any) -> Any:
    if x is None or not isinstance(space, gymnasium.Space):
        return x  # int/shape spaces carry no structure to restore
    from skrl_like.jax.utils.spaces import unflatten_tensorized_space  # written alongside; imported lazily

    return unflatten_tensorized_space(space, x)


class _NetworkModel(Model):
    """A model whose layers and forward computation come from a parsed network definition."""

    _definition: ClassVar[ModelDefinition | None] = None

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Any = None,
        parent: Any = None,
        name: str | None = None,
    ) -> None:
        Model.__init__(self, observation_space, action_space, device, parent, name)
        definition = type(self)._definition
        MIXINS[definition.mixin].__init__(self, **definition.mixin_options)

    def setup(self) -> None:
        definition = self._definition
        self._containers_by_name = {container.name: container for container in definition.containers}
        sizes = (self.num_observations, self.num_actions)
        for container in definition.containers:
            recurrent = container.recurrent
            if recurrent is not None:
                where = f"recurrent container {container.name!r}"
                layer = RecurrentLayer(*(recurrent.kind, recurrent.hidden_size, recurrent.num_layers), where=where)
                setattr(self, f"{container.name}_container", layer.clone(sequence_length=recurrent.sequence_length))
                if container.layers:  # the final layer an output token embeds: after the recurrent layer
                    setattr(
                        self, f"{container.name}_head", nn.Sequential(NETWORK.build_layers(container.layers, *sizes))
                    )
            elif container.layers:  # an empty container is the identity
                setattr(
                    self, f"{container.name}_container", nn.Sequential(NETWORK.build_layers(container.layers, *sizes))
                )
        if definition.log_std is not None:
            initial, fixed = definition.log_std
            size = get_num_units(definition.output.size, *sizes)
            if fixed:
                self.log_std_parameter = jnp.full((size,), initial, dtype=jnp.float32)
            else:
                self.log_std_parameter = self.param(
                    "log_std_parameter", lambda _: jnp.full((size,), initial, dtype=jnp.float32)
                )

    def get_specification(self) -> dict:
        """``{"rnn": {"sequence_length", "sizes"}}`` for a model with a recurrent container (sized for
        ``self.num_envs``, 1 unless set), else ``{}``."""
        container = recurrent_container(self._definition.containers)
        return {} if container is None else container.recurrent.specification(self.__dict__.get("num_envs", 1))

    def _call_recurrent(self, name: str, x: Any, inputs: Mapping[str, Any]) -> tuple:
        states = inputs.get("rnn")
        container = self._containers_by_name[name]
        if states is None:
            raise ValueError(
                f"This model is recurrent (container {name!r} is a {container.recurrent.kind}) and needs the hidden "
                f"states in inputs['rnn'], of sizes {self.get_specification()['rnn']['sizes']}: use it with a "
                "recurrent (_RNN) agent, or pass inputs['rnn'] (zeros at an episode's start) and feed back "
                "outputs['rnn']"
            )
        # a pure apply sees no mode: the training layout is chosen by the inputs (the agent's update passes the
        # episode ends of its sequences)
        terminated = inputs.get("terminated")
        output, new_states = getattr(self, f"{name}_container")(x, list(states), terminated, terminated is not None)
        head = getattr(self, f"{name}_head", None)
        return (output if head is None else head(output)), new_states

    def _call_container(self, name: str, x: Any) -> Any:
        container = getattr(self, f"{name}_container", None)
        if container is None:
            return x
        NETWORK.check_container_input(self._containers_by_name[name], x)  # shapes are static: checked when traced
        return container(x)

    def __call__(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        definition = self._definition
        values: dict[str, Any] = {
            "states": _unflatten(self.observation_space, inputs.get("states")),
            "taken_actions": _unflatten(self.action_space, inputs.get("taken_actions")),
            "observation_space": self.observation_space,
            "action_space": self.action_space,
        }
        recurrent = recurrent_container(definition.containers)
        new_states = []

        def call(name: str, x: Any) -> Any:
            if recurrent is None or name != recurrent.name:
                return self._call_container(name, x)
            output, states = self._call_recurrent(name, x, inputs)
            new_states.append(states)
            return output

        last = NETWORK.run_containers(definition.containers, values, call)
        output = NETWORK.evaluate_output(definition.output, values, last)
        outputs = {"rnn": new_states[0]} if new_states else {}
        if definition.log_std is not None:
            return output, self.log_std_parameter, outputs
        return output, outputs


def build_model(
    definition: ModelDefinition, observation_space: Any, action_space: Any, device: Any, return_source: bool = False
) -> Any:
    """Create the model class of a parsed definition and return an instance (or its description)."""
    if return_source:
        return describe(definition)
    namespace = {
        "__init__": _NetworkModel.__init__,  # keep ours: flax would otherwise generate a dataclass __init__
        "__module__": __name__,
        "__qualname__": definition.class_name,
        "_definition": definition,
    }
    model_class = type(definition.class_name, (MIXINS[definition.mixin], _NetworkModel), namespace)
    return model_class(observation_space=observation_space, action_space=action_space, device=device)


def describe(definition: ModelDefinition) -> str:
    """A readable, Python-like description of the model (it is documentation: nothing executes it)."""
    options = ", ".join(f"{key}={value!r}" for key, value in definition.mixin_options.items())
    lines = [
        f"# {definition.class_name}: built directly from the definition (no generated code is executed)",
        f"class {definition.class_name}({definition.mixin}, Model):",
        f"    # {definition.mixin}.__init__(self, {options})",
        "    def setup(self):",
    ]
    for container in definition.containers:
        layers = ", ".join(text for layer in container.layers for text in NETWORK.layer_text(layer))
        recurrent = container.recurrent
        if recurrent is not None:
            lines.append(
                f"        self.{container.name}_container = RecurrentLayer({recurrent.kind!r}, "
                f"hidden_size={recurrent.hidden_size}, num_layers={recurrent.num_layers}, "
                f"sequence_length={recurrent.sequence_length})"
            )
            if container.layers:
                lines.append(f"        self.{container.name}_head = nn.Sequential([{layers}])")
        elif container.layers:
            lines.append(f"        self.{container.name}_container = nn.Sequential([{layers}])")
    if definition.log_std is not None:
        initial, fixed = definition.log_std
        array = f"jnp.full(({get_num_units(definition.output.size)},), {initial!r})"
        parameter = array if fixed else f"self.param('log_std_parameter', lambda _: {array})"
        lines.append(f"        self.log_std_parameter = {parameter}")
    lines += [
        "",
        "    def __call__(self, inputs, role):",
        "        states = unflatten_tensorized_space(self.observation_space, inputs.get('states'))",
        "        taken_actions = unflatten_tensorized_space(self.action_space, inputs.get('taken_actions'))",
    ]
    names = {"observation_space": "self.observation_space", "action_space": "self.action_space"}
    for container in definition.containers:
        expression = NETWORK.expression_text(NETWORK.container_input(container), names)
        if container.recurrent is not None:
            lines.append(
                f"        {container.name}, rnn_states = self.{container.name}_container({expression}, "
                "inputs['rnn'], inputs.get('terminated'), training='terminated' in inputs)"
            )
            if container.layers:
                lines.append(f"        {container.name} = self.{container.name}_head({container.name})")
            continue
        call = f"self.{container.name}_container({expression})" if container.layers else expression
        lines.append(f"        {container.name} = {call}")
    last = definition.containers[-1].name
    output = definition.output.expression
    result = last if output is None else NETWORK.expression_text(output.tree, {**names, OUTPUT_KEY: last})
    lines.append(f"        output = {result}")
    log_std = "self.log_std_parameter, " if definition.log_std is not None else ""
    extra = "{'rnn': rnn_states}" if recurrent_container(definition.containers) is not None else "{}"
    lines.append(f"        return output, {log_std}{extra}")
    return "\n".join(lines) + "\n"
