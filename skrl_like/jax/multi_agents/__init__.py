from skrl_like.jax.multi_agents.base import MultiAgent

__all__ = ["MultiAgent"]
