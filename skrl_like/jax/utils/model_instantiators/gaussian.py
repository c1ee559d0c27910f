"""``gaussian_model``: a ``GaussianMixin`` model from a network definition."""

from collections.abc import Sequence
from typing import Any, Mapping, Union

from skrl_like.core.network_definition import instantiator_definition
from skrl_like.jax.utils.model_instantiators._builder import build_model


def gaussian_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any | None = None,
    clip_actions: bool = False,
    clip_log_std: bool = True,
    min_log_std: float = -20,
    max_log_std: float = 2,
    reduction: str = "sum",
    initial_log_std: float = 0,
    fixed_log_std: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: Union[str, Sequence[str]] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Build a Gaussian policy (``GaussianModel``) from a network definition.

    :param observation_space: observation space of the model.
    :param action_space: action space of the model (clipping bounds come from it).
    :param device: device for the parameters.
    :param clip_actions: see ``GaussianMixin``.
    :param clip_log_std: see ``GaussianMixin``.
    :param min_log_std: see ``GaussianMixin``.
    :param max_log_std: see ``GaussianMixin``.
    :param reduction: see ``GaussianMixin``.
    :param initial_log_std: initial value of every entry of the state-independent ``log_std_parameter``.
    :param fixed_log_std: keep ``log_std`` constant (not a trainable parameter).
    :param network: list of containers (``name``, ``input``, ``layers``, ``activations``).
    :param output: output expression, e.g. ``"2 * tanh(ACTIONS)"``.
    :param return_source: return a readable description of the model instead of an instance.
    :param kwargs: pre-1.3 parameters (``input_shape``, ``hiddens``, ...), used when ``network`` is empty.
    :return: the model (call ``init_state_dict(role)`` before using it), or its description.
    """
    options = {
        "clip_actions": clip_actions,
        "clip_log_std": clip_log_std,
        "min_log_std": min_log_std,
        "max_log_std": max_log_std,
        "reduction": reduction,
        "initial_log_std": initial_log_std,
        "fixed_log_std": fixed_log_std,
        "network": network,
        "output": output,
    }
    definition = instantiator_definition("gaussian_model", "GaussianMixin", options, args, kwargs)
    return build_model(definition, observation_space, action_space, device, return_source)
