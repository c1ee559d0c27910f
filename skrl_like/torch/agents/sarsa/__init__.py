"""SARSA (torch, tabular)."""

from skrl_like.torch.agents.sarsa.sarsa import SARSA, SARSA_DEFAULT_CONFIG

__all__ = ["SARSA", "SARSA_DEFAULT_CONFIG"]
