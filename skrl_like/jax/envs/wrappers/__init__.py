"""Environment wrappers for the JAX backend and ``wrap_env``, which picks the right one."""

import re
from typing import Any, List, Union

from skrl_like._logging import logger
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.jax.envs.wrappers.gym_envs import GymWrapper
from skrl_like.jax.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.jax.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["wrap_env", "Wrapper", "MultiAgentEnvWrapper"]

# (patterns, tag) in detection order: the first rule with a matching base-class name wins
_DETECTION_RULES = [
    (["omni.isaac.lab.*", "isaaclab.*"], "isaaclab-*"),
    (["omni.isaac.gym..*"], "omniverse-isaacgym"),
    (["isaacgymenvs..*", "tasks..*.VecTask"], "isaacgym-preview4"),
    (["rlgpu.tasks..*.VecTask"], "isaacgym-preview2"),
    (["brax.envs..*"], "brax"),
    (["robosuite.environments."], "robosuite"),
    (["dm_env..*"], "dm"),
    (["pettingzoo.utils.env", "pettingzoo.utils.wrappers"], "pettingzoo"),
    (["gymnasium..*"], "gymnasium"),
    (["gym..*"], "gym"),
]

# recognised tags whose wrappers are outside skrl_like's scope (or, for dm/robosuite, torch-only in skrl)
_UNSUPPORTED_TAGS = (
    "bidexhands",
    "brax",
    "isaacgym-preview2",
    "isaacgym-preview3",
    "isaacgym-preview4",
    "omniverse-isaacgym",
    "dm",
    "robosuite",
)


def _base_class_names(env: Any) -> List[str]:
    classes = list(type(env).__bases__)
    try:
        classes += list(type(env.unwrapped).__bases__)
    except Exception:  # env without (or with a broken) `unwrapped`
        pass
    return sorted({f"{cls.__module__}.{cls.__name__}" for cls in classes})


def _matches(patterns: List[str], names: List[str]) -> bool:
    return any(pattern in name or re.match(pattern, name) for pattern in patterns for name in names)


def wrap_env(env: Any, wrapper: str = "auto", verbose: bool = True) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so agents and trainers can use it.

    :param env: the environment (gymnasium, gym or PettingZoo parallel API).
    :param wrapper: ``"auto"`` detects the library from the environment's base classes; or a tag:
        ``"gymnasium"``, ``"gym"``, ``"pettingzoo"`` (Isaac/Brax/DeepMind/robosuite/Bi-DexHands tags are recognised
        but not supported by skrl_like).
    :param verbose: log the detected base classes and the chosen wrapper.
    """
    if wrapper == "auto":
        names = _base_class_names(env)
        if verbose:
            logger.info("Environment wrapper: 'auto' (class: " + ", ".join(names) + ")")
        for patterns, tag in _DETECTION_RULES:
            if _matches(patterns, names):
                wrapper = tag
                break
        else:
            raise ValueError(f"Unknown wrapper type: {names}")
    if wrapper == "gymnasium":
        chosen: Any = GymnasiumWrapper
    elif wrapper == "gym":
        chosen = GymWrapper
    elif wrapper == "pettingzoo":
        chosen = PettingZooWrapper
    elif wrapper.startswith("isaaclab") or wrapper in _UNSUPPORTED_TAGS:
        raise ValueError(
            f"Environment wrapper '{wrapper}' is not supported in skrl_like's JAX backend: wrap the environment "
            "as a gymnasium vector env (or write a Wrapper subclass)"
        )
    else:
        raise ValueError(f"Unknown wrapper type: {wrapper}")
    if verbose:
        logger.info(f"Environment wrapper: {chosen.__name__}")
    return chosen(env)
