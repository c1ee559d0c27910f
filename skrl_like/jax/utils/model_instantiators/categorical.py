"""``categorical_model``: a ``CategoricalMixin`` model from a network definition."""

from collections.abc import Sequence
from typing import Any, Mapping, Union

from skrl_like.core.network_definition import instantiator_definition
from skrl_like.jax.utils.model_instantiators._builder import build_model


def categorical_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any | None = None,
    unnormalized_log_prob: bool = True,
    network: Sequence[Mapping[str, Any]] = [],
    output: Union[str, Sequence[str]] = "",
    return_source: bool = False,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Build a categorical policy (``CategoricalModel``) for ``Discrete`` actions.

    :param observation_space: observation space of the model.
    :param action_space: ``Discrete`` action space.
    :param device: device for the parameters.
    :param unnormalized_log_prob: the output is logits (``True``) or probabilities (``False``).
    :param network: list of containers (``name``, ``input``, ``layers``, ``activations``).
    :param output: output expression, usually ``"ACTIONS"``.
    :param return_source: return a readable description of the model instead of an instance.
    :param kwargs: pre-1.3 parameters (``input_shape``, ``hiddens``, ...), used when ``network`` is empty.
    :return: the model (call ``init_state_dict(role)`` before using it), or its description.
    """
    options = {"unnormalized_log_prob": unnormalized_log_prob, "network": network, "output": output}
    definition = instantiator_definition("categorical_model", "CategoricalMixin", options, args, kwargs)
    return build_model(definition, observation_space, action_space, device, return_source)
