"""Privileged states for an asymmetric actor-critic (skrl 2.x's observation/state split), written once.

A value model or critic asks for the environment's states (``env.state()``: Isaac Lab's ``"critic"`` group, a
Playground env's ``"privileged_state"``) instead of the observations by carrying a ``state_space`` (not ``None``): it
is built on those states (its ``observation_space`` is the state space, as MAPPO's value model is built on the shared
state) and the agent calls it with ``inputs["states"]`` = the privileged states. The policy always reads the
observations. Nothing changes for a model without a ``state_space``: a skrl 1.4 script runs as before.

The trainer reads ``env.state()`` before and after each step only for an agent that asks (:attr:`privileged_roles`
of the agent base) and hands both to ``record_transition`` in ``infos`` (:func:`with_privileged_states`), as it hands
MAPPO's shared states; the agent stores them beside the transition (memory tensors :data:`PRIVILEGED_STATES` and
:data:`NEXT_PRIVILEGED_STATES`), and its update reads them from there.

The privileged states have a preprocessor of their own (:data:`PRIVILEGED_PREPROCESSOR`, skrl 2.x's
``state_preprocessor`` beside its ``observation_preprocessor``; ``state_preprocessor`` keeps skrl 1.4's meaning, the
observations'): its statistics are updated with the privileged states wherever the observations' are updated with the
observations at an update (:func:`critic_states`; the on-policy agents' value inputs), and it is saved and loaded
with the checkpoints. No policy reads the privileged states, so acting never applies it.
"""

from typing import Any, Callable, Iterable, Mapping, Optional, Tuple

from skrl_like import logger
from skrl_like.core.spaces import compute_space_size

#: memory tensor (and ``infos`` key) of the privileged states before each step
PRIVILEGED_STATES = "privileged_states"
#: memory tensor (and ``infos`` key) of the privileged states after each step
NEXT_PRIVILEGED_STATES = "next_privileged_states"
#: config key (and checkpoint entry) of the privileged states' preprocessor; its kwargs: this name + ``"_kwargs"``
PRIVILEGED_PREPROCESSOR = "privileged_state_preprocessor"


def model_state_space(model: Any) -> Any:
    """The state space a model reads the privileged states of, or ``None`` (it reads the observations)."""
    return getattr(model, "state_space", None)


def privileged_roles(algorithm: str, models: Mapping[str, Any], allowed: Iterable[str]) -> Tuple[str, ...]:
    """The roles whose model asks for the privileged states (has a ``state_space``), checked: only the roles in
    ``allowed`` (the algorithm's value model or critics) may, and all of them read states of one size.

    :raises ValueError: another role asks for them (a policy acts on observations alone, also when deployed), or two
        models were built for state spaces of different sizes.
    """
    allowed = tuple(allowed)
    roles = tuple(role for role, model in models.items() if model is not None and model_state_space(model) is not None)
    refused = [role for role in roles if role not in allowed]
    if refused:
        feeds = f"only to its {', '.join(repr(role) for role in allowed)} model(s)" if allowed else "to no model"
        raise ValueError(
            f"{algorithm}: the {', '.join(repr(role) for role in refused)} model(s) ask for the environment's "
            f"privileged states (they have a state_space), but {algorithm} feeds them {feeds}: build "
            f"{'those models' if len(refused) > 1 else 'that model'} without state_space (on the observations)"
        )
    sizes = {role: compute_space_size(model_state_space(models[role])) for role in roles}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"{algorithm}: the models that read the privileged states were built for state spaces of different "
            f"sizes ({sizes}): build them all with the environment's state_space"
        )
    return roles


def check_env_state_space(name: str, agent: Any, env_state_space: Any) -> None:
    """An agent whose models ask for the privileged states needs an environment with a state space of their size.

    :param name: how the trainer names the agent (``"agent 0 (PPO)"``).
    :raises ValueError: the env has no state space, or one of another size than the models'.
    """
    roles = getattr(agent, "privileged_roles", ())
    if not roles:
        return
    if env_state_space is None:
        raise ValueError(
            f"{name}: its {', '.join(repr(role) for role in roles)} model(s) ask for the environment's privileged "
            "states (they have a state_space), but the environment has no state space (env.state_space is None; an "
            "Isaac Lab env gives one with a 'critic' observation group): build the model(s) without state_space, on "
            "the observations, or use an environment with states"
        )
    model_size = compute_space_size(model_state_space(agent.models[roles[0]]))
    env_size = compute_space_size(env_state_space)
    if model_size != env_size:
        raise ValueError(
            f"{name}: its {', '.join(repr(role) for role in roles)} model(s) were built for privileged states of size "
            f"{model_size}, but the environment's state space has size {env_size}: build them with "
            "state_space=env.state_space"
        )


def with_privileged_states(infos: Any, states: Any, next_states: Any) -> dict:
    """The step's ``infos`` with the privileged states before and after it, for ``record_transition``."""
    return {**(infos or {}), PRIVILEGED_STATES: states, NEXT_PRIVILEGED_STATES: next_states}


def privileged_extras(algorithm: str, infos: Any) -> dict:
    """The two privileged-state arrays a transition stores, read from ``infos``.

    :raises KeyError: ``infos`` lacks them (a loop written by hand that did not add ``env.state()``)."""
    if not isinstance(infos, Mapping) or PRIVILEGED_STATES not in infos or NEXT_PRIVILEGED_STATES not in infos:
        raise KeyError(
            f"{algorithm}.record_transition: a model asks for the environment's privileged states, but infos has no "
            f"'{PRIVILEGED_STATES}'/'{NEXT_PRIVILEGED_STATES}' (env.state() before and after the step): train with a "
            "skrl_like trainer, which adds them, or add them to infos in your loop"
        )
    return {PRIVILEGED_STATES: infos[PRIVILEGED_STATES], NEXT_PRIVILEGED_STATES: infos[NEXT_PRIVILEGED_STATES]}


def privileged_state_space(agent: Any) -> Optional[Any]:
    """The state space an agent's models read (the memory tensors' size), or ``None`` when none asks."""
    roles = getattr(agent, "privileged_roles", ())
    return model_state_space(agent.models[roles[0]]) if roles else None


def privileged_names(agent: Any) -> Tuple[str, ...]:
    """The memory tensors an update samples besides the transition's six: the privileged states before and after
    each step when a model reads them, else none."""
    return (PRIVILEGED_STATES, NEXT_PRIVILEGED_STATES) if getattr(agent, "privileged_roles", ()) else ()


def build_privileged_preprocessor(agent: Any) -> Any:
    """The agent's preprocessor of the privileged states: ``cfg["privileged_state_preprocessor"]`` built (and
    registered as a checkpoint module) by ``agent._build_preprocessor``, or the identity when it is not configured.

    Configured for an agent whose models all read the observations, it is not built, with a warning (a skrl 2.x
    config may name a states preprocessor for a task whose critic reads the observations; skrl 2.x then keeps unused
    statistics)."""
    if not agent.cfg.get(PRIVILEGED_PREPROCESSOR):
        return agent._empty_preprocessor
    if not agent.privileged_roles:
        logger.warning(
            f"{type(agent).__name__}: cfg['{PRIVILEGED_PREPROCESSOR}'] preprocesses the environment's privileged "
            "states, but no model reads them (none was built with a state_space), so it is not built: remove it, "
            "or build the value model/critics with state_space=env.state_space"
        )
        return agent._empty_preprocessor
    return agent._build_preprocessor(PRIVILEGED_PREPROCESSOR)


def critic_states(
    sampled: Mapping[str, Any], states: Any, next_states: Any, preprocessor: Optional[Callable] = None
) -> Tuple[Any, Any]:
    """What the critics read before and after the step: the sampled privileged states (``sampled``: the extras drawn
    with :func:`privileged_names`) when they read them, else the (preprocessed) ``states`` and ``next_states``.

    :param preprocessor: the privileged states' preprocessor (a torch agent's; its statistics are updated with both,
        as the observations' are with the states and the next states); ``None``: they are read as sampled (a JAX
        update preprocesses them beforehand, threading the statistics)."""
    if PRIVILEGED_STATES in sampled:
        if preprocessor is None:
            return sampled[PRIVILEGED_STATES], sampled[NEXT_PRIVILEGED_STATES]
        return preprocessor(sampled[PRIVILEGED_STATES], train=True), preprocessor(
            sampled[NEXT_PRIVILEGED_STATES], train=True
        )
    return states, next_states


def network_input_space(observation_space: Any, state_space: Any) -> Any:
    """The space a model instantiator sizes the network's input by: the states for a model built with
    ``state_space`` (an asymmetric value model or critic), else the observations."""
    return observation_space if state_space is None else state_space


def reading_states(model: Any, state_space: Any) -> Any:
    """``model`` marked as reading the privileged states of ``state_space`` (``None``: returned as it is; a
    description string from ``return_source`` too)."""
    if state_space is not None and not isinstance(model, str):
        model.state_space = state_space
    return model
