"""Double Deep Q-Network (DDQN), JAX backend.

van Hasselt et al., "Deep Reinforcement Learning with Double Q-learning", 2016. DQN with one change in the TD target:
the online network picks the next action and the target network evaluates it,
``y = r + gamma * (1 - done) * Q_target(s', argmax_a Q(s', a))``, which curbs DQN's overestimation of values.
"""

from typing import Any

import jax
import jax.numpy as jnp

from skrl_like.core.agents.dqn import DDQN_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.jax.agents.dqn.dqn import DQN, LearnerState

__all__ = ["DDQN", "DDQN_DEFAULT_CONFIG"]


class DDQN(DQN):
    """Double Deep Q-Network: the parameters and behaviour of :class:`~skrl_like.jax.agents.dqn.DQN` (its config
    keys are those of ``DDQN_DEFAULT_CONFIG``) except the TD target."""

    default_config = DDQN_DEFAULT_CONFIG

    def _next_values(self, learner: LearnerState, next_states: jax.Array) -> Any:
        """Double Q-learning's bootstrap value: ``Q_target(s', argmax_a Q(s', a))``."""
        next_q_values, _, _ = self.q_network.act({"states": next_states}, role="q_network", params=learner.q_network)
        next_actions = jnp.argmax(next_q_values, axis=-1, keepdims=True)
        target_q_values, _, _ = self.target_q_network.act(
            {"states": next_states}, role="target_q_network", params=learner.target_q_network
        )
        return jnp.take_along_axis(target_q_values, next_actions, axis=-1)
