"""The model classes the instantiators build: ordinary ``nn.Module``\\ s assembled from parsed definitions.

Parameter names follow skrl's generated classes (``<name>_container.<index>.*``, ``log_std_parameter``,
``<role>_layer.*``) so that checkpoints are interchangeable.
"""

from typing import Any, Mapping, Sequence

import gymnasium
import torch

from skrl_like.torch.models import (
    CategoricalMixin,
    DeterministicMixin,
    GaussianMixin,
    Model,
    MultiCategoricalMixin,
    MultivariateGaussianMixin,
)
from skrl_like.torch.utils.model_instantiators._expressions import TOKEN_KEY
from skrl_like.torch.utils.model_instantiators.common import (
    ContainerDefinition,
    LayerDefinition,
    OutputDefinition,
    generate_containers,
    get_num_units,
    parse_output,
)
from skrl_like.torch.utils.spaces import unflatten_tensorized_space

GAUSSIAN_TYPES = (GaussianMixin, MultivariateGaussianMixin)


def _structured(space: Any, flat: torch.Tensor | None) -> Any:
    # plain int / shape spaces have no structure to restore: the flat tensor is used as it is
    if isinstance(space, gymnasium.Space):
        return unflatten_tensorized_space(space, flat)
    return flat


class InstantiatedModel(Model):
    """Shared machinery of the generated models: containers run in order over an environment of named values."""

    def _build_containers(self, containers: Sequence[ContainerDefinition]) -> None:
        plan = []
        for container in containers:
            sequential = torch.nn.Sequential(*container.build(self.num_observations, self.num_actions))
            setattr(self, f"{container.name}_container", sequential)
            plan.append((container.name, sequential, container.input.evaluate))
        # (name, module, input evaluator) triples: compute walks this list instead of looking modules up by name
        self._plan = plan
        self._last_name = containers[-1].name

    def _run_containers(self, inputs: Mapping[str, Any]) -> dict:
        env = {
            "states": _structured(self.observation_space, inputs.get("states")),
            "taken_actions": _structured(self.action_space, inputs.get("taken_actions")),
        }
        for name, container, evaluate_input in self._plan:
            env[name] = container(evaluate_input(env))
        return env

    def _output_size(self, output: OutputDefinition) -> int:
        return get_num_units(output.size, self.num_observations, self.num_actions)

    def _log_std_parameter(self, size: int, initial_log_std: float, fixed_log_std: bool) -> torch.nn.Parameter:
        return torch.nn.Parameter(torch.full((size,), float(initial_log_std)), requires_grad=not fixed_log_std)


def _evaluate_output(output: OutputDefinition, env: dict, token_value: Any) -> Any:
    if output.expression is None:
        return token_value
    env[TOKEN_KEY] = token_value
    return output.expression.evaluate(env)


class _SingleModel(InstantiatedModel):
    def _build(self, network: Any, output: Any) -> None:
        containers, self._output_definition = generate_containers(
            network, output, embed_output=True, observation_space=self.observation_space, action_space=self.action_space
        )
        self._build_containers(containers)

    def _network_output(self, inputs: Mapping[str, Any]) -> Any:
        env = self._run_containers(inputs)
        return _evaluate_output(self._output_definition, env, env[self._last_name])


class GaussianModel(GaussianMixin, _SingleModel):
    """Gaussian policy built from a network definition (see :func:`gaussian_model`)."""

    def __init__(
        self,
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
        network: Sequence[Mapping[str, Any]] = (),
        output: str = "",
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions, clip_log_std, min_log_std, max_log_std, reduction, role="")
        self._build(network, output)
        size = self._output_size(self._output_definition)
        self.log_std_parameter = self._log_std_parameter(size, initial_log_std, fixed_log_std)
        self.to(self.device)

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        return self._network_output(inputs), self.log_std_parameter, {}


class MultivariateGaussianModel(MultivariateGaussianMixin, _SingleModel):
    """Multivariate Gaussian policy built from a network definition (see :func:`multivariate_gaussian_model`)."""

    def __init__(
        self,
        observation_space: Any = None,
        action_space: Any = None,
        device: Any = None,
        clip_actions: bool = False,
        clip_log_std: bool = True,
        min_log_std: float = -20,
        max_log_std: float = 2,
        initial_log_std: float = 0,
        fixed_log_std: bool = False,
        network: Sequence[Mapping[str, Any]] = (),
        output: str = "",
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        MultivariateGaussianMixin.__init__(self, clip_actions, clip_log_std, min_log_std, max_log_std, role="")
        self._build(network, output)
        size = self._output_size(self._output_definition)
        self.log_std_parameter = self._log_std_parameter(size, initial_log_std, fixed_log_std)
        self.to(self.device)

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        return self._network_output(inputs), self.log_std_parameter, {}


class DeterministicModel(DeterministicMixin, _SingleModel):
    """Deterministic model (value, Q-function, deterministic policy) built from a network definition."""

    def __init__(
        self,
        observation_space: Any = None,
        action_space: Any = None,
        device: Any = None,
        clip_actions: bool = False,
        network: Sequence[Mapping[str, Any]] = (),
        output: str = "",
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self, clip_actions, role="")
        self._build(network, output)
        self.to(self.device)

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        return self._network_output(inputs), {}


class CategoricalModel(CategoricalMixin, _SingleModel):
    """Categorical policy built from a network definition (see :func:`categorical_model`)."""

    def __init__(
        self,
        observation_space: Any = None,
        action_space: Any = None,
        device: Any = None,
        unnormalized_log_prob: bool = True,
        network: Sequence[Mapping[str, Any]] = (),
        output: str = "",
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self, unnormalized_log_prob, role="")
        self._build(network, output)
        self.to(self.device)

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        return self._network_output(inputs), {}


class MultiCategoricalModel(MultiCategoricalMixin, _SingleModel):
    """Multi-categorical policy built from a network definition (see :func:`multicategorical_model`)."""

    def __init__(
        self,
        observation_space: Any = None,
        action_space: Any = None,
        device: Any = None,
        unnormalized_log_prob: bool = True,
        reduction: str = "sum",
        network: Sequence[Mapping[str, Any]] = (),
        output: str = "",
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        MultiCategoricalMixin.__init__(self, unnormalized_log_prob, reduction, role="")
        self._build(network, output)
        self.to(self.device)

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        return self._network_output(inputs), {}


# --- shared models -------------------------------------------------------------------------------------------

MIXINS = {
    "gaussianmixin": GaussianMixin,
    "multivariategaussianmixin": MultivariateGaussianMixin,
    "deterministicmixin": DeterministicMixin,
    "categoricalmixin": CategoricalMixin,
    "multicategoricalmixin": MultiCategoricalMixin,
}
# the options each mixin's __init__ takes from a role's parameters, with their defaults
_GAUSSIAN_OPTIONS = {"clip_actions": False, "clip_log_std": True, "min_log_std": -20, "max_log_std": 2}
MIXIN_OPTIONS = {
    GaussianMixin: {**_GAUSSIAN_OPTIONS, "reduction": "sum"},
    MultivariateGaussianMixin: _GAUSSIAN_OPTIONS,
    DeterministicMixin: {"clip_actions": False},
    CategoricalMixin: {"unnormalized_log_prob": True},
    MultiCategoricalMixin: {"unnormalized_log_prob": True, "reduction": "sum"},
}  # fmt: skip


class SharedModelBase(InstantiatedModel):
    """A trunk of containers shared by two roles, each with its own final layer, output expression and mixin.

    With ``single_forward_pass`` the first role's call caches the trunk outputs and the second role's next call
    consumes them (agents call the policy then the value on the same states), so the trunk runs once per pair.
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Any,
        mixins: Sequence[type],
        roles: Sequence[str],
        parameters: Sequence[Mapping[str, Any]],
        single_forward_pass: bool = True,
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        for mixin, role, parameter in zip(mixins, roles, parameters):
            options = {key: parameter.get(key, default) for key, default in MIXIN_OPTIONS[mixin].items()}
            mixin.__init__(self, **options, role=role)
        # the trunk comes from the first role's network; each role's final layer stays outside it
        containers, first_output = generate_containers(
            parameters[0]["network"],
            parameters[0].get("output", ""),
            embed_output=False,
            observation_space=observation_space,
            action_space=action_space,
        )
        names = [container.name for container in containers]
        spaces = {"OBSERVATION_SPACE": observation_space, "ACTION_SPACE": action_space}
        outputs = [first_output] + [
            parse_output(parameter.get("output", ""), names, spaces, embed_output=False) for parameter in parameters[1:]
        ]
        self._build_containers(containers)
        heads = []
        for mixin, role, parameter, output in zip(mixins, roles, parameters, outputs):
            layer = None
            if output.token is not None:
                layer = LayerDefinition("linear", {"out_features": output.token}).build(
                    self.num_observations, self.num_actions
                )[0]
                setattr(self, f"{role}_layer", layer)
            if mixin in GAUSSIAN_TYPES:
                self.log_std_parameter = self._log_std_parameter(
                    self._output_size(output),
                    parameter.get("initial_log_std", 0),
                    parameter.get("fixed_log_std", False),
                )
            heads.append((layer, output, mixin in GAUSSIAN_TYPES))
        self._heads = heads
        self._role_indices = {role: index for index, role in enumerate(roles)}
        self._role_mixins = dict(zip(roles, mixins))
        self._single_forward_pass = bool(single_forward_pass)
        self._shared_output: dict | None = None  # trunk outputs cached by the first role (skrl omits this)
        self.to(self.device)

    def _unknown_role(self, role: str) -> ValueError:
        return ValueError(
            f"Unknown role {role!r} for this shared model: it serves {', '.join(map(repr, self._role_indices))}"
        )

    def compute(self, inputs: Mapping[str, Any], role: str = "") -> tuple:
        index = self._role_indices.get(role)
        if index is None:
            raise self._unknown_role(role)
        if not self._single_forward_pass:
            env = self._run_containers(inputs)
        elif index == 0:
            env = self._run_containers(inputs)
            self._shared_output = env
        else:
            env = self._shared_output
            if env is None:  # e.g. a value-only call: no policy call has filled the cache
                env = self._run_containers(inputs)
            self._shared_output = None
        layer, output, gaussian = self._heads[index]
        trunk = env[self._last_name]
        value = _evaluate_output(output, env, trunk if layer is None else layer(trunk))
        if gaussian:
            return value, self.log_std_parameter, {}
        return value, {}


def _shared_act(self: SharedModelBase, inputs: Mapping[str, Any], role: str = "") -> tuple:
    mixin = self._role_mixins.get(role)
    if mixin is None:
        raise self._unknown_role(role)
    return mixin.act(self, inputs, role)


def _role_method(method_name: str) -> Any:
    def dispatch(self: SharedModelBase, role: str = "") -> Any:
        mixin = self._role_mixins.get(role)
        if mixin is None:
            raise self._unknown_role(role)
        method = getattr(mixin, method_name, None)
        if method is None:
            raise AttributeError(f"Role {role!r} is served by {mixin.__name__}, which has no {method_name}")
        return method(self, role)

    dispatch.__name__ = method_name
    dispatch.__doc__ = f"``{method_name}`` of the mixin that serves ``role``."
    return dispatch


def shared_model_class(mixins: Sequence[type]) -> type:
    """The ``SharedModel`` class for a pair of mixins (created once per pair).

    Registered as a module global so that instances can be pickled like those of ordinary classes.

    :param mixins: the two mixin classes, in role order.
    """
    qualified_name = "_SharedModel_" + "_".join(mixin.__name__ for mixin in mixins)
    cls = globals().get(qualified_name)
    if cls is None:
        namespace = {
            "__module__": __name__,
            "__qualname__": qualified_name,
            "__doc__": "Shared model built by shared_model(): " + " + ".join(mixin.__name__ for mixin in mixins),
            "__init__": SharedModelBase.__init__,  # the mixins' __init__ would come first in the MRO
            "act": _shared_act,
            "get_entropy": _role_method("get_entropy"),
            "get_log_std": _role_method("get_log_std"),
            "distribution": _role_method("distribution"),
        }
        cls = type("SharedModel", (*mixins, SharedModelBase), namespace)
        globals()[qualified_name] = cls
    return cls
