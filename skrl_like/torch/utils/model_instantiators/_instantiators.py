"""The public instantiator functions: a network definition in, a ready model (or its description) out."""

from collections.abc import Mapping, Sequence
from typing import Any

from skrl_like.core.agents.privileged import network_input_space, reading_states
from skrl_like.core.network_definition import instantiator_definition, parse_shared_model
from skrl_like.torch.models import Model
from skrl_like.torch.utils.model_instantiators._builder import build_model, build_shared_model


def gaussian_model(
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
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a Gaussian policy (``GaussianMixin`` + ``Model``) from a network definition.

    :param observation_space: observation space (sizes ``STATES`` tokens; gives ``states`` its structure).
    :param action_space: action space (sizes ``ACTIONS`` tokens; bounds for ``clip_actions``).
    :param device: where the model lives.
    :param clip_actions: clamp sampled actions to the action bounds.
    :param clip_log_std: clamp the log standard deviation to ``[min_log_std, max_log_std]``.
    :param min_log_std: lower log-std bound.
    :param max_log_std: upper log-std bound.
    :param reduction: log-probability reduction over action dimensions (``"sum"``, ``"mean"``, ``"prod"``, ``"none"``).
    :param initial_log_std: initial value of the state-independent ``log_std_parameter``.
    :param fixed_log_std: keep ``log_std_parameter`` out of training (``requires_grad=False``).
    :param network: list of containers ``{"name", "input", "layers", "activations"}``.
    :param output: output expression, e.g. ``"ACTIONS"`` or ``"2 * tanh(ACTIONS)"``.
    :param return_source: return a readable description of the model instead of the model.
    :param kwargs: legacy (pre-1.3) parameters ``input_shape``, ``hiddens``... used when ``network`` is empty.
    """
    options = dict(
        clip_actions=clip_actions,
        clip_log_std=clip_log_std,
        min_log_std=min_log_std,
        max_log_std=max_log_std,
        reduction=reduction,
        initial_log_std=initial_log_std,
        fixed_log_std=fixed_log_std,
        network=network,
        output=output,
    )
    definition = instantiator_definition("gaussian_model", "GaussianMixin", options, args, kwargs)
    return build_model(definition, observation_space, action_space, device, return_source)


def multivariate_gaussian_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    clip_actions: bool = False,
    clip_log_std: bool = True,
    min_log_std: float = -20,
    max_log_std: float = 2,
    initial_log_std: float = 0,
    fixed_log_std: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a multivariate Gaussian policy (``MultivariateGaussianMixin`` + ``Model``) from a network definition.

    Parameters as :func:`gaussian_model` (there is no ``reduction``: the density is joint by construction).
    """
    options = dict(
        clip_actions=clip_actions,
        clip_log_std=clip_log_std,
        min_log_std=min_log_std,
        max_log_std=max_log_std,
        initial_log_std=initial_log_std,
        fixed_log_std=fixed_log_std,
        network=network,
        output=output,
    )
    definition = instantiator_definition(
        "multivariate_gaussian_model", "MultivariateGaussianMixin", options, args, kwargs
    )
    return build_model(definition, observation_space, action_space, device, return_source)


def deterministic_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    clip_actions: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    state_space: Any = None,
    **kwargs: Any,
) -> Model | str:
    """Build a deterministic model (``DeterministicMixin`` + ``Model``): values, Q-functions, deterministic actors.

    :param observation_space: observation space.
    :param action_space: action space (``ACTIONS`` / ``STATES_ACTIONS`` inputs of Q-functions, clip bounds).
    :param device: where the model lives.
    :param clip_actions: clamp the output to the action bounds.
    :param network: list of containers.
    :param output: output expression, e.g. ``"ONE"`` for a value function.
    :param return_source: return a readable description instead of the model.
    :param state_space: the environment's state space (``env.state_space``), for a value model or critic of an
        asymmetric actor-critic: the model is built on the privileged states instead of the observations (its
        ``STATES``/``OBSERVATIONS`` input is the states) and the agent feeds it ``env.state()``. ``None``: the
        observations, as in skrl 1.4.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    options = dict(clip_actions=clip_actions, network=network, output=output)
    definition = instantiator_definition("deterministic_model", "DeterministicMixin", options, args, kwargs)
    space = network_input_space(observation_space, state_space)
    return reading_states(build_model(definition, space, action_space, device, return_source), state_space)


def categorical_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    unnormalized_log_prob: bool = True,
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a categorical policy (``CategoricalMixin`` + ``Model``) for a ``Discrete`` action space.

    :param observation_space: observation space.
    :param action_space: the ``Discrete`` action space (``ACTIONS`` = number of classes).
    :param device: where the model lives.
    :param unnormalized_log_prob: the output holds logits (``True``) or probabilities (``False``).
    :param network: list of containers.
    :param output: output expression, usually ``"ACTIONS"``.
    :param return_source: return a readable description instead of the model.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    options = dict(unnormalized_log_prob=unnormalized_log_prob, network=network, output=output)
    definition = instantiator_definition("categorical_model", "CategoricalMixin", options, args, kwargs)
    return build_model(definition, observation_space, action_space, device, return_source)


def multicategorical_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    unnormalized_log_prob: bool = True,
    reduction: str = "sum",
    network: Sequence[Mapping[str, Any]] = [],
    output: str | Sequence[str] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Model | str:
    """Build a multi-categorical policy (``MultiCategoricalMixin`` + ``Model``) for a ``MultiDiscrete`` space.

    :param observation_space: observation space.
    :param action_space: the ``MultiDiscrete`` action space (``ACTIONS`` = ``sum(nvec)`` logits).
    :param device: where the model lives.
    :param unnormalized_log_prob: the output holds logits (``True``) or probabilities (``False``).
    :param reduction: how the components' log-probabilities are combined.
    :param network: list of containers.
    :param output: output expression, usually ``"ACTIONS"``.
    :param return_source: return a readable description instead of the model.
    :param kwargs: legacy (pre-1.3) parameters, used when ``network`` is empty.
    """
    options = dict(unnormalized_log_prob=unnormalized_log_prob, reduction=reduction, network=network, output=output)
    definition = instantiator_definition("multicategorical_model", "MultiCategoricalMixin", options, args, kwargs)
    return build_model(definition, observation_space, action_space, device, return_source)


def shared_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    structure: Sequence[str] = ["GaussianMixin", "DeterministicMixin"],
    roles: Sequence[str] = [],
    parameters: Sequence[Mapping[str, Any]] = [],
    single_forward_pass: bool = True,
    return_source: bool = False,
) -> Model | str:
    """Build one model serving two roles (e.g. policy and value) over a shared trunk.

    The first role's ``network`` defines the trunk; each role gets its own final layer (``self.<role>_layer``)
    and output expression, and its mixin; ``act``, ``get_entropy``, ``distribution`` and ``get_log_std``
    dispatch on the role.

    :param observation_space: observation space.
    :param action_space: action space.
    :param device: where the model lives.
    :param structure: the two mixin names, e.g. ``["GaussianMixin", "DeterministicMixin"]`` (case-insensitive).
    :param roles: the two role names, e.g. ``["policy", "value"]``.
    :param parameters: one dict per role: ``network`` (first role only), ``output`` and mixin options.
    :param single_forward_pass: run the trunk once per (first role, second role) pair of calls.
    :param return_source: return a readable description instead of the model.
    """
    definition = parse_shared_model(structure, roles, parameters, single_forward_pass)
    return build_shared_model(definition, observation_space, action_space, device, return_source)
