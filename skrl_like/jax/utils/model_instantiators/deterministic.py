"""``deterministic_model``: a ``DeterministicMixin`` model from a network definition."""

from collections.abc import Sequence
from typing import Any, Mapping, Union

from skrl_like.core.agents.privileged import network_input_space, reading_states
from skrl_like.core.network_definition import instantiator_definition
from skrl_like.jax.utils.model_instantiators._builder import build_model


def deterministic_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any | None = None,
    clip_actions: bool = False,
    network: Sequence[Mapping[str, Any]] = [],
    output: Union[str, Sequence[str]] = "",
    return_source: bool = False,
    *args: Any,
    state_space: Any = None,
    **kwargs: Any,
) -> Any:
    """Build a deterministic model (``DeterministicModel``: values, Q-functions, deterministic policies).

    :param observation_space: observation space of the model.
    :param action_space: action space of the model.
    :param device: device for the parameters.
    :param clip_actions: clip outputs to the bounds of a ``Box`` action space.
    :param network: list of containers (``name``, ``input``, ``layers``, ``activations``).
    :param output: output expression, e.g. ``"ONE"`` for a value function.
    :param return_source: return a readable description of the model instead of an instance.
    :param state_space: the environment's state space (``env.state_space``), for a value model or critic of an
        asymmetric actor-critic: the model is built on the privileged states instead of the observations (its
        ``STATES``/``OBSERVATIONS`` input is the states) and the agent feeds it ``env.state()``. ``None``: the
        observations, as in skrl 1.4.
    :param kwargs: pre-1.3 parameters (``input_shape``, ``hiddens``, ...), used when ``network`` is empty.
    :return: the model (call ``init_state_dict(role)`` before using it), or its description.
    """
    options = {"clip_actions": clip_actions, "network": network, "output": output}
    definition = instantiator_definition("deterministic_model", "DeterministicMixin", options, args, kwargs)
    space = network_input_space(observation_space, state_space)
    return reading_states(build_model(definition, space, action_space, device, return_source), state_space)
