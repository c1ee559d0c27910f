"""Trust Region Policy Optimization (torch)."""

from skrl_like.torch.agents.trpo.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.torch.agents.trpo.trpo_rnn import TRPO_RNN

__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG", "TRPO_RNN"]
