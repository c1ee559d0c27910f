"""Proximal Policy Optimization (JAX)."""

from skrl_like.jax.agents.ppo.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.agents.ppo.ppo_rnn import PPO_RNN

__all__ = ["PPO", "PPO_DEFAULT_CONFIG", "PPO_RNN"]
