"""Agents (JAX)."""

from skrl_like.jax.agents.base import Agent

__all__ = ["Agent"]
