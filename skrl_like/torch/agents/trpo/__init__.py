"""Trust Region Policy Optimization (torch)."""

from skrl_like.torch.agents.trpo.trpo import TRPO, TRPO_DEFAULT_CONFIG

__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG"]
