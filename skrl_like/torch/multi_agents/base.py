"""The torch ``MultiAgent`` base: the neutral per-agent bookkeeping plus the torch ``Agent``'s tensor hooks."""

from typing import Tuple

import torch

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

    def _departure_columns(self, states: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        column = (states.shape[0], 1)
        rewards = torch.zeros(column, dtype=torch.float32, device=states.device)
        done = torch.ones(column, dtype=torch.bool, device=states.device)
        return rewards, done, ~done


__all__ = ["MultiAgent"]
