"""Backend-neutral utilities (skrl's ``skrl.utils``): seeding, written in :mod:`skrl_like.core.seeding`."""

from skrl_like.core.seeding import get_env_seed, get_seed, set_seed

__all__ = ["get_env_seed", "get_seed", "set_seed"]
