"""Memories (torch): ``Memory`` (base) and ``RandomMemory``."""

from skrl_like.torch.memories.base import Memory
from skrl_like.torch.memories.random import RandomMemory

__all__ = ["Memory", "RandomMemory"]
