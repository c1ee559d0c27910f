"""Double Deep Q-Network (DDQN), torch backend.

van Hasselt et al., "Deep Reinforcement Learning with Double Q-learning", 2016. DQN with one change in the TD target:
the online network picks the next action and the target network evaluates it,
``y = r + gamma * (1 - done) * Q_target(s', argmax_a Q(s', a))``, which curbs DQN's overestimation of values.
"""

import torch

from skrl_like.core.agents import dqn as neutral
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.torch.agents.dqn.dqn import DQN

DDQN_DEFAULT_CONFIG = with_backend_keys(
    neutral.DDQN_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class DDQN(DQN):
    """Double Deep Q-Network: the parameters and behaviour of :class:`~skrl_like.torch.agents.dqn.DQN` (its config
    keys are those of ``DDQN_DEFAULT_CONFIG``) except the TD target."""

    default_config = DDQN_DEFAULT_CONFIG

    def _next_values(self, next_states: torch.Tensor) -> torch.Tensor:
        """Double Q-learning's bootstrap value: ``Q_target(s', argmax_a Q(s', a))``."""
        next_q_values, _, _ = self.q_network.act({"states": next_states}, role="q_network")
        next_actions = torch.argmax(next_q_values, dim=-1, keepdim=True)
        target_q_values, _, _ = self.target_q_network.act({"states": next_states}, role="target_q_network")
        return torch.gather(target_q_values, dim=-1, index=next_actions)
