"""Advantage Actor-Critic (torch)."""

from skrl_like.torch.agents.a2c.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.torch.agents.a2c.a2c_rnn import A2C_RNN

__all__ = ["A2C", "A2C_DEFAULT_CONFIG", "A2C_RNN"]
