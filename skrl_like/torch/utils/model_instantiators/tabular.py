"""``tabular_model``: the epsilon-greedy Q-table policy of skrl's Q-learning and SARSA examples, by name.

skrl's instantiators have no tabular model (its Runner knows no tabular agent); this one lets a YAML file
(``class: TabularMixin``) train Q-learning and SARSA. The table is a plain tensor attribute, which ``TabularMixin``
saves and loads.
"""

from typing import Any

import torch

from skrl_like.torch.models import Model, TabularMixin


class EpsilonGreedyTabularModel(TabularMixin, Model):
    """Greedy over its environment's Q-table, a uniformly random action with probability ``epsilon``.

    :param num_envs: environments, each with its own table ``q_table[env]`` of shape ``(states, actions)``.
    :param epsilon: the probability of a random action.
    :param initial_q_value: the table's initial value (above the rewards: an optimistic start explores).
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        device: Any = None,
        num_envs: int = 1,
        epsilon: float = 0.1,
        initial_q_value: float = 1.0,
    ) -> None:
        Model.__init__(self, observation_space, action_space, device)
        TabularMixin.__init__(self, num_envs)
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"tabular_model: epsilon must be in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        shape = (num_envs, self.num_observations, self.num_actions)
        self.q_table = torch.full(shape, float(initial_q_value), device=self.device)
        self._env_ids = torch.arange(num_envs, device=self.device).view(-1, 1)

    def compute(self, inputs: Any, role: str = "") -> tuple:
        states = inputs["states"].long().view(-1, 1)
        actions = torch.argmax(self.q_table[self._env_ids, states], dim=-1)
        explore = torch.rand(actions.shape, device=self.device) < self.epsilon
        random_actions = torch.randint(self.num_actions, actions.shape, device=self.device)
        return torch.where(explore, random_actions, actions), {}


def tabular_model(
    observation_space: Any = None,
    action_space: Any = None,
    device: Any = None,
    num_envs: int = 1,
    epsilon: float = 0.1,
    initial_q_value: float = 1.0,
    return_source: bool = False,
) -> Any:
    """Build an :class:`EpsilonGreedyTabularModel` (the parameters are its own); ``return_source`` gives a one-line
    description instead."""
    if return_source:
        return f"EpsilonGreedyTabularModel(num_envs={num_envs}, epsilon={epsilon}, initial_q_value={initial_q_value})"
    return EpsilonGreedyTabularModel(observation_space, action_space, device, num_envs, epsilon, initial_q_value)
