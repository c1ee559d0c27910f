"""Soft Actor-Critic (torch)."""

from skrl_like.torch.agents.sac.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.agents.sac.sac_rnn import SAC_RNN

__all__ = ["SAC", "SAC_DEFAULT_CONFIG", "SAC_RNN"]
