"""SARSA (State-Action-Reward-State-Action, tabular), torch backend.

Rummery and Niranjan, "On-line Q-learning using connectionist systems", 1994. On-policy TD control: every step, in
every environment's table, ``Q(s, a) += learning_rate * (r + gamma * (1 - done) * Q(s', a') - Q(s, a))`` with ``a'``
drawn from the behaviour policy at ``s'``. Acting, storing and the vectorised update live in
:class:`~skrl_like.torch.agents.tabular.TabularAgent`; this file holds only the target's next action.
"""

import torch

from skrl_like.core.agents import sarsa as neutral
from skrl_like.torch.agents.tabular import TabularAgent

SARSA_DEFAULT_CONFIG = neutral.SARSA_DEFAULT_CONFIG


class SARSA(TabularAgent):
    """SARSA: tabular on-policy TD control, bootstrapping from a next action of the behaviour policy.

    Takes the arguments of :class:`~skrl_like.torch.agents.tabular.TabularAgent`: ``models={"policy": ...}`` (a
    ``TabularMixin`` model with a ``(num_envs, num_states, num_actions)`` Q-table), Discrete observation and action
    spaces, and ``cfg`` keys of ``SARSA_DEFAULT_CONFIG``.
    """

    default_config = SARSA_DEFAULT_CONFIG

    def _next_actions(self, q_table: torch.Tensor, next_states: torch.Tensor) -> torch.Tensor:
        """An action of the behaviour policy (e.g. epsilon-greedy) at each next state, sampled here for the target:
        as in skrl, a fresh draw, not the action the agent will take at ``s'`` on the next step [compat]."""
        return self.policy.act({"states": next_states}, role="policy")[0]
