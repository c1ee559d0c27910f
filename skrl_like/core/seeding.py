"""Seeding: the seed of a run, held once for the whole package (re-exported as skrl's ``skrl_like.utils.set_seed``).

Core modules (the environment wrappers, the Runner) read it from here, so ``core`` never imports ``skrl_like.utils``.
"""

import os
import random
import sys
import time
from typing import Optional

import numpy as np

from skrl_like import config, logger

# the seed of the last set_seed call (the process's rank added in a distributed run) and that rank; the environment
# wrappers seed their env from them at their first reset
_seed: Optional[int] = None
_rank = 0


def set_seed(seed: Optional[int] = None, deterministic: bool = False) -> int:
    """Seed Python's, NumPy's and the backends' random generators and return the seed used.

    :param seed: the seed; ``None`` draws one from ``os.urandom``.
    :param deterministic: torch only: make cuDNN deterministic (slower).

    torch is seeded now if it is already imported, else when ``skrl_like.torch`` is first imported,
    so a JAX program never loads torch.
    The environment is seeded later, by the wrapper's first ``reset`` (see :func:`get_seed`).
    """
    global _seed, _rank
    if seed is None:
        try:
            seed = int.from_bytes(os.urandom(4), sys.byteorder)
        except NotImplementedError:
            seed = int(time.time() * 1000)
        seed %= 2**31
    seed = int(seed)
    _rank = 0
    if config.torch.is_distributed:
        _rank += config.torch.rank
    if config.jax.is_distributed:
        _rank += config.jax.rank
    seed += _rank
    logger.info(f"Seed: {seed}")

    random.seed(seed)
    np.random.seed(seed)
    config.torch._pending_seed = (seed, deterministic)
    if sys.modules.get("torch") is not None:  # already imported (None means import blocked)
        seed_torch()
    config.jax.key = seed
    _seed = seed
    return seed


def get_seed() -> Optional[int]:
    """The seed used by the last :func:`set_seed` call (``None`` before any call).

    The environment wrappers read it at their first ``reset`` to seed the env (sub-environment ``i`` of a vector
    env gets ``seed + i``), so that ``set_seed(seed)`` alone makes a run reproducible.
    """
    return _seed


def get_env_seed(num_envs: int) -> Optional[int]:
    """The seed of sub-environment 0 of a wrapper with ``num_envs`` environments (sub-environment ``i`` gets it
    plus ``i``); ``None`` before any :func:`set_seed` call.

    In a distributed run process ``rank`` starts at ``seed + rank * num_envs``: the processes' environments get
    disjoint seeds (``seed + rank + i`` would give process 1's environment 0 the seed of process 0's environment 1),
    together the seeds of one process running ``world_size * num_envs`` environments.
    """
    if _seed is None:
        return None
    return _seed - _rank + _rank * num_envs


def seed_torch() -> None:
    """Apply a seed given to :func:`set_seed` before torch was imported (called by ``skrl_like.torch``)."""
    pending = getattr(config.torch, "_pending_seed", None)
    if pending is None:
        return
    import torch

    seed, deterministic = pending
    config.torch._pending_seed = None
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        logger.warning("cuDNN deterministic mode is on: it can be slower (also set CUBLAS_WORKSPACE_CONFIG)")


__all__ = ["get_env_seed", "get_seed", "seed_torch", "set_seed"]
