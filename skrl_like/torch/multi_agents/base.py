"""The torch ``MultiAgent`` base: the neutral per-agent bookkeeping plus the torch ``Agent``'s tensor hooks."""

from skrl_like.core.multi_agents.base import MultiAgentCore
from skrl_like.torch.agents.base import Agent


class MultiAgent(MultiAgentCore, Agent):
    """Base class of the multi-agent algorithms.

    :param possible_agents: the agent names (``env.possible_agents``).
    :param models: ``{uid: {role: model}}``.
    :param memories: ``{uid: memory}``.
    :param observation_spaces: ``{uid: space}`` (``env.observation_spaces``).
    :param action_spaces: ``{uid: space}`` (``env.action_spaces``).
    :param device: device for the agents' computations (``None``: the default torch device).
    :param cfg: the algorithm's configuration; keys of its per-agent set may be ``{uid: value}`` dicts.
    """


__all__ = ["MultiAgent"]
