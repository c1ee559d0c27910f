"""Deep Q-Network and Double Deep Q-Network (torch)."""

from skrl_like.torch.agents.dqn.ddqn import DDQN, DDQN_DEFAULT_CONFIG
from skrl_like.torch.agents.dqn.dqn import DQN, DQN_DEFAULT_CONFIG

__all__ = ["DQN", "DQN_DEFAULT_CONFIG", "DDQN", "DDQN_DEFAULT_CONFIG"]
