"""Robust Policy Optimization (torch)."""

from skrl_like.torch.agents.rpo.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.torch.agents.rpo.rpo_rnn import RPO_RNN

__all__ = ["RPO", "RPO_DEFAULT_CONFIG", "RPO_RNN"]
