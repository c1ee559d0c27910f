"""Builds torch models from parsed definitions, with no generated source and no ``exec``.

One model class serves every instantiator: its roles (one for the single-role instantiators, two for
``shared_model``) each bring a mixin, an output and, without an embedded final layer, a ``<role>_layer``.
Parameter names follow skrl's generated classes (``<name>_container.<index>.*``, ``log_std_parameter``,
``<role>_layer.*``) so that checkpoints are interchangeable.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import torch

from skrl_like.core.network_definition import (
    OUTPUT_KEY,
    Concatenate,
    Container,
    ModelDefinition,
    Name,
    SharedModelDefinition,
    check_conv_input,
    get_num_units,
    recurrent_container,
)
from skrl_like.torch.models import (
    CategoricalMixin,
    DeterministicMixin,
    GaussianMixin,
    Model,
    MultiCategoricalMixin,
    MultivariateGaussianMixin,
)
from skrl_like.torch.models.recurrent import make_recurrent_module, recurrent_forward
from skrl_like.torch.utils.model_instantiators.common import TorchNetwork
from skrl_like.torch.utils.spaces import unflatten_tensorized_space

MIXINS = {
    "GaussianMixin": GaussianMixin,
    "MultivariateGaussianMixin": MultivariateGaussianMixin,
    "DeterministicMixin": DeterministicMixin,
    "CategoricalMixin": CategoricalMixin,
    "MultiCategoricalMixin": MultiCategoricalMixin,
}
NETWORK = TorchNetwork()
# key of the new hidden states among a trunk's values (not an identifier: no container can take it)
RNN_KEY = "<rnn states>"


class RecurrentContainer(torch.nn.Module):
    """A ``type: GRU|LSTM|RNN`` container: the recurrent layer (``rnn``), then any embedded final layer (``layers``).

    :param container: the parsed container.
    :param input_size: features of its input.
    :param layers: the modules after the recurrent layer.
    """

    def __init__(self, container: Container, input_size: int, layers: list) -> None:
        super().__init__()
        recurrent = container.recurrent
        self.rnn = make_recurrent_module(recurrent.kind, input_size, recurrent.hidden_size, recurrent.num_layers)
        self.layers = torch.nn.Sequential(*layers)
        self.sequence_length = recurrent.sequence_length
        self.where = f"recurrent container {container.name!r}"

    def forward(self, x: torch.Tensor, states: list, terminated: torch.Tensor | None, training: bool) -> tuple:
        output, new_states = recurrent_forward(
            self.rnn, x, states, self.sequence_length, terminated, training, self.where
        )
        return self.layers(output), new_states


def _input_size(node: Any, containers: Sequence[Container], num_observations: int, where: str) -> int:
    """Features a recurrent container reads (torch's recurrent modules need it up front; linear layers are lazy)."""
    if isinstance(node, Concatenate):
        return sum(_input_size(part, containers, num_observations, where) for part in node.parts)
    if isinstance(node, Name) and node.key == "states":
        return num_observations
    if isinstance(node, Name):
        source = next(container for container in containers if container.name == node.key)
        sized = [layer for layer in source.layers if "features" in layer.options]
        if sized and sized[-1] is source.layers[-1]:
            return get_num_units(sized[-1].options["features"], num_observations, 0)
        if not source.layers and source.recurrent is not None:
            return source.recurrent.hidden_size
    raise ValueError(
        f"The input of {where} has no known size: feed it OBSERVATIONS, or a container that ends with a linear layer "
        "(e.g. an MLP container before it)"
    )


def _structured(space: Any, flat: torch.Tensor | None) -> Any:
    # plain int / shape spaces have no structure to restore: the flat tensor is used as it is
    if isinstance(space, gymnasium.Space):
        return unflatten_tensorized_space(space, flat)
    return flat


class InstantiatedModel(Model):
    """A model whose containers, outputs and mixins come from a parsed definition.

    With ``single_forward_pass`` (shared models) the first role's call caches the trunk outputs and the second
    role's next call consumes them when it gets the same states tensor (agents call the policy then the value on
    the same states), so the trunk runs once per pair; on other states (PPO's values of the rollout and its last
    states, after the policy's log-probabilities of the rollout alone) the trunk runs again.

    :param observation_space: observation space.
    :param action_space: action space.
    :param device: where the model lives.
    :param definition: the parsed trunk and roles.
    :param embedded_output: the final layer is inside the last container (single-role models).
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Any,
        definition: SharedModelDefinition,
        embedded_output: bool = True,
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        for role in definition.roles:
            MIXINS[role.mixin].__init__(self, **role.mixin_options, role=role.role)
        sizes = (self.num_observations, self.num_actions)
        for container in definition.containers:
            layers = NETWORK.build_layers(container.layers, *sizes)
            if container.recurrent is not None:
                where = f"recurrent container {container.name!r}"
                input_size = _input_size(container.input.tree, definition.containers, self.num_observations, where)
                module = RecurrentContainer(container, input_size, layers)
            else:
                module = torch.nn.Sequential(*layers)
            setattr(self, f"{container.name}_container", module)
        #: the recurrent container, if any: the model is then recurrent (see get_specification)
        self._recurrent = recurrent_container(definition.containers)
        #: environments the hidden states are sized for (get_specification); the agent or the user sets it
        self.num_envs = 1
        heads = {}
        for role in definition.roles:
            layer = None if embedded_output else role.output.final_layer()
            if layer is not None:
                setattr(self, f"{role.role}_layer", NETWORK.build_layer(layer, *sizes)[0])
            if role.log_std is not None:
                initial, fixed = role.log_std
                size = get_num_units(role.output.size, *sizes)
                self.log_std_parameter = torch.nn.Parameter(torch.full((size,), initial), requires_grad=not fixed)
            heads[role.role] = (role, layer is not None)
        self._definition = definition
        self._heads = heads
        self._first_role = definition.roles[0].role
        # (states, trunk outputs) cached by the first role (skrl omits this)
        self._shared_output: tuple | None = None
        self.to(self.device)

    def get_specification(self) -> dict:
        """``{"rnn": {"sequence_length", "sizes"}}`` for a model with a recurrent container (sized for
        ``self.num_envs``), else ``{}``."""
        return {} if self._recurrent is None else self._recurrent.recurrent.specification(self.num_envs)

    def _run_trunk(self, inputs: Mapping[str, Any]) -> tuple[dict, Any]:
        values = {
            "states": _structured(self.observation_space, inputs.get("states")),
            "taken_actions": _structured(self.action_space, inputs.get("taken_actions")),
            "observation_space": self.observation_space,
            "action_space": self.action_space,
        }
        if self._recurrent is None:
            return values, NETWORK.run_containers(self._definition.containers, values, self._call_container)

        def call(name: str, x: torch.Tensor) -> torch.Tensor:
            if name != self._recurrent.name:
                return self._call_container(name, x)
            output, values[RNN_KEY] = self._call_recurrent(name, x, inputs)
            return output

        return values, NETWORK.run_containers(self._definition.containers, values, call)

    def _call_recurrent(self, name: str, x: torch.Tensor, inputs: Mapping[str, Any]) -> tuple:
        states = inputs.get("rnn")
        if states is None:
            raise ValueError(
                f"This model is recurrent (container {name!r} is a {self._recurrent.recurrent.kind}) and needs the "
                f"hidden states in inputs['rnn'], of sizes {self.get_specification()['rnn']['sizes']}: use it with a "
                "recurrent (_RNN) agent, or pass inputs['rnn'] (zeros at an episode's start) and feed back "
                "outputs['rnn']"
            )
        return getattr(self, f"{name}_container")(x, list(states), inputs.get("terminated"), self.training)

    def _call_container(self, name: str, x: torch.Tensor) -> torch.Tensor:
        try:
            return getattr(self, f"{name}_container")(x)
        except RuntimeError:  # torch's kernel-size error names no container: name it where that is the cause
            container = next(container for container in self._definition.containers if container.name == name)
            if container.layers and container.layers[0].kind == "conv2d" and x.ndim == 4:
                check_conv_input(container, x.shape[-2:], "(batch, channels, height, width)", "valid")
            raise

    def _role(self, role: str) -> tuple:
        if len(self._heads) == 1:
            return next(iter(self._heads.values()))  # single-role models serve any role name, as skrl's do
        head = self._heads.get(role)
        if head is None:
            raise ValueError(
                f"Unknown role {role!r} for this shared model: it serves {', '.join(map(repr, self._heads))}"
            )
        return head

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        definition, has_layer = self._role(role)
        if not self._definition.single_forward_pass or len(self._heads) == 1:
            trunk = self._run_trunk(inputs)
        elif definition.role == self._first_role:
            trunk = self._run_trunk(inputs)
            self._shared_output = (inputs.get("states"), trunk)
        else:  # only the trunk of these very states: an agent may call the value alone, or on other states
            cached, self._shared_output = self._shared_output, None
            trunk = cached[1] if cached is not None and cached[0] is inputs.get("states") else self._run_trunk(inputs)
        values, last = trunk
        if has_layer:
            last = getattr(self, f"{definition.role}_layer")(last)
        output = NETWORK.evaluate_output(definition.output, values, last)
        outputs = {"rnn": values[RNN_KEY]} if RNN_KEY in values else {}
        if definition.log_std is not None:
            return output, self.log_std_parameter, outputs
        return output, outputs


def _role_mixin(model: InstantiatedModel, role: str, method_name: str) -> type:
    mixin = MIXINS[model._role(role)[0].mixin]
    if not hasattr(mixin, method_name):
        raise AttributeError(f"Role {role!r} is served by {mixin.__name__}, which has no {method_name}")
    return mixin


def _shared_act(self: InstantiatedModel, inputs: Mapping[str, Any], role: str = "") -> tuple:
    """``act`` of the mixin that serves ``role``."""
    return _role_mixin(self, role, "act").act(self, inputs, role)


def _role_method(method_name: str) -> Any:
    def dispatch(self: InstantiatedModel, role: str = "") -> Any:
        return getattr(_role_mixin(self, role, method_name), method_name)(self, role)

    dispatch.__name__ = method_name
    dispatch.__doc__ = f"``{method_name}`` of the mixin that serves ``role``."
    return dispatch


def model_class(mixins: Sequence[str], class_name: str) -> type:
    """The model class for a tuple of mixins (created once, registered here so that instances pickle).

    :param mixins: the mixin names, in role order.
    :param class_name: the class's name (``"GaussianModel"``, ``"SharedModel"``...).
    """
    qualified_name = f"_{class_name}_" + "_".join(mixins)
    cls = globals().get(qualified_name)
    if cls is None:
        namespace = {
            "__module__": __name__,
            "__qualname__": qualified_name,
            "__doc__": f"{class_name} built by a model instantiator: {' + '.join(mixins)}",
            "__init__": InstantiatedModel.__init__,  # the mixins' __init__ would come first in the MRO
        }
        if len(mixins) > 1:
            namespace["act"] = _shared_act
            for name in ("get_entropy", "get_log_std", "distribution"):
                namespace[name] = _role_method(name)
        cls = type(class_name, (*(MIXINS[mixin] for mixin in mixins), InstantiatedModel), namespace)
        globals()[qualified_name] = cls
    return cls


def build_model(
    definition: ModelDefinition, observation_space: Any, action_space: Any, device: Any, return_source: bool
) -> Model | str:
    """The single-role model of a parsed definition (or its readable description)."""
    shared = SharedModelDefinition(definition.containers, [definition], single_forward_pass=False)
    if return_source:
        return describe(definition.class_name, shared, embedded_output=True)
    cls = model_class([definition.mixin], definition.class_name)
    return cls(observation_space, action_space, device, shared)


def build_shared_model(
    definition: SharedModelDefinition, observation_space: Any, action_space: Any, device: Any, return_source: bool
) -> Model | str:
    """The shared model of a parsed definition (or its readable description)."""
    if return_source:
        return describe("SharedModel", definition, embedded_output=False)
    cls = model_class([role.mixin for role in definition.roles], "SharedModel")
    return cls(observation_space, action_space, device, definition, embedded_output=False)


def describe(class_name: str, definition: SharedModelDefinition, embedded_output: bool) -> str:
    """A readable, Python-like description of the model (skrl returned exec-able source; nothing executes this)."""
    roles = definition.roles
    lines = [
        f"class {class_name}({', '.join(role.mixin for role in roles)}, Model):",
        "    def __init__(self, observation_space, action_space, device):",
        "        Model.__init__(self, observation_space, action_space, device)",
    ]
    for role in roles:
        arguments = "".join(f"{key}={value!r}, " for key, value in role.mixin_options.items())
        lines.append(f'        {role.mixin}.__init__(self, {arguments}role="{role.role}")')
    lines.append("")
    for container in definition.containers:
        recurrent = container.recurrent
        if recurrent is not None:
            lines.append(
                f"        self.{container.name}_container = RecurrentContainer(nn.{recurrent.kind}("
                f"hidden_size={recurrent.hidden_size}, num_layers={recurrent.num_layers}, batch_first=True), "
                f"sequence_length={recurrent.sequence_length}, layers=nn.Sequential("
            )
        else:
            lines.append(f"        self.{container.name}_container = nn.Sequential(")
        lines += [f"            {text}," for layer in container.layers for text in NETWORK.layer_text(layer)]
        lines.append("        ))" if recurrent is not None else "        )")
    for role in roles:
        if not embedded_output and role.output.token is not None:
            lines.append(f"        self.{role.role}_layer = {NETWORK.layer_text(role.output.final_layer())[0]}")
        if role.log_std is not None:
            size = {"ACTIONS": "self.num_actions", "ONE": "1"}[role.output.size]
            lines.append(
                f"        self.log_std_parameter = nn.Parameter(torch.full(size=({size},), "
                f"fill_value={role.log_std[0]}), requires_grad={not role.log_std[1]})"
            )
    lines += [
        "",
        '    def compute(self, inputs, role=""):',
        '        states = unflatten_tensorized_space(self.observation_space, inputs.get("states"))',
        '        taken_actions = unflatten_tensorized_space(self.action_space, inputs.get("taken_actions"))',
    ]
    names = {"states": "states", "taken_actions": "taken_actions"}
    names |= {"observation_space": "self.observation_space", "action_space": "self.action_space"}
    trunk = [
        f"{c.name}, rnn_states = self.{c.name}_container({NETWORK.expression_text(c.input.tree, names)}, "
        'inputs["rnn"], inputs.get("terminated"), self.training)'
        if c.recurrent is not None
        else f"{c.name} = self.{c.name}_container({NETWORK.expression_text(c.input.tree, names)})"
        for c in definition.containers
    ]
    extra = '{"rnn": rnn_states}' if recurrent_container(definition.containers) is not None else "{}"
    last = definition.containers[-1].name
    for index, role in enumerate(roles):
        body = list(trunk)
        if len(roles) > 1:
            lines.append(f'        {"if" if index == 0 else "elif"} role == "{role.role}":')
            if definition.single_forward_pass and index == 0:
                body.append(f'self._shared_output = (inputs.get("states"), {last})')
            elif definition.single_forward_pass:
                cached = 'self._shared_output is not None and self._shared_output[0] is inputs.get("states")'
                body = [f"if {cached}:", f"    {last} = self._shared_output[1]", "else:"]
                body += [*(f"    {line}" for line in trunk), "self._shared_output = None"]
        result = last
        if not embedded_output and role.output.token is not None:
            body.append(f"output = self.{role.role}_layer({last})")
            result = "output"
        if role.output.expression is not None:
            token = last if embedded_output else "output"
            body.append(
                f"output = {NETWORK.expression_text(role.output.expression.tree, {**names, OUTPUT_KEY: token})}"
            )
            result = "output"
        body.append(f"return {result}, {'self.log_std_parameter, ' if role.log_std is not None else ''}{extra}")
        indent = "            " if len(roles) > 1 else "        "
        lines += [indent + line for line in body]
    if len(roles) > 1:
        lines.append(f'        raise ValueError(f"Unknown role {{role}}: use {roles[0].role!r} or {roles[1].role!r}")')
    return "\n".join(lines) + "\n"
