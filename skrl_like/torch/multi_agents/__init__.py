from skrl_like.torch.multi_agents.base import MultiAgent

__all__ = ["MultiAgent"]
