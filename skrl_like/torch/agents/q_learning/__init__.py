"""Q-learning (torch, tabular)."""

from skrl_like.torch.agents.q_learning.q_learning import Q_LEARNING, Q_LEARNING_DEFAULT_CONFIG

__all__ = ["Q_LEARNING", "Q_LEARNING_DEFAULT_CONFIG"]
