"""Proximal Policy Optimization (JAX)."""

from skrl_like.jax.agents.ppo.ppo import PPO, PPO_DEFAULT_CONFIG

__all__ = ["PPO", "PPO_DEFAULT_CONFIG"]
