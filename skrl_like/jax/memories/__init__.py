"""Memories for the JAX backend (host NumPy buffers; JAX arrays when read with the ``"jax"`` backend)."""

from skrl_like.jax.memories.base import Memory
from skrl_like.jax.memories.random import RandomMemory

__all__ = ["Memory", "RandomMemory"]
