"""Deep Deterministic Policy Gradient (torch)."""

from skrl_like.torch.agents.ddpg.ddpg import DDPG, DDPG_DEFAULT_CONFIG

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG"]
