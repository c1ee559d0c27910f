"""Q-learning (tabular), torch backend.

Watkins, "Learning from delayed rewards", 1989. Off-policy TD control: every step, in every environment's table,
``Q(s, a) += learning_rate * (r + gamma * (1 - done) * max_a' Q(s', a') - Q(s, a))``. Acting, storing and the
vectorised update live in :class:`~skrl_like.torch.agents.tabular.TabularAgent`; this file holds only the target's
next action.
"""

import torch

from skrl_like.core.agents import q_learning as neutral
from skrl_like.torch.agents.tabular import TabularAgent

Q_LEARNING_DEFAULT_CONFIG = neutral.Q_LEARNING_DEFAULT_CONFIG


class Q_LEARNING(TabularAgent):
    """Q-learning: tabular off-policy TD control, bootstrapping from the greedy next action.

    Takes the arguments of :class:`~skrl_like.torch.agents.tabular.TabularAgent`: ``models={"policy": ...}`` (a
    ``TabularMixin`` model with a ``(num_envs, num_states, num_actions)`` Q-table), Discrete observation and action
    spaces, and ``cfg`` keys of ``Q_LEARNING_DEFAULT_CONFIG``.
    """

    default_config = Q_LEARNING_DEFAULT_CONFIG

    def _next_actions(self, q_table: torch.Tensor, next_states: torch.Tensor) -> torch.Tensor:
        """The greedy action of each environment's table at its next state: ``argmax_a' Q(s', a')``."""
        return torch.argmax(q_table[self._env_ids, next_states], dim=-1)
