"""Deep Q-Network and Double Deep Q-Network (JAX)."""

from skrl_like.jax.agents.dqn.ddqn import DDQN, DDQN_DEFAULT_CONFIG
from skrl_like.jax.agents.dqn.dqn import DQN, DQN_DEFAULT_CONFIG

__all__ = ["DQN", "DQN_DEFAULT_CONFIG", "DDQN", "DDQN_DEFAULT_CONFIG"]
