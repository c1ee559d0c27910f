"""Agents (torch)."""

from skrl_like.torch.agents.base import Agent

__all__ = ["Agent"]
