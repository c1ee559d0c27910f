"""Environment wrappers (torch): ``wrap_env`` picks the wrapper that fits an environment."""

import re
from typing import Any, List, Union

from skrl_like import logger
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.torch.envs.wrappers.gym_envs import GymWrapper
from skrl_like.torch.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.torch.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["MultiAgentEnvWrapper", "Wrapper", "wrap_env"]

# first match wins; the order matters (e.g. Isaac Lab envs are also gymnasium envs)
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

# recognised for compatibility with skrl 1.4.3, but their simulators are out of skrl_like's scope
_UNSUPPORTED_TAGS = {
    "dm",
    "robosuite",
    "bidexhands",
    "brax",
    "isaacgym-preview2",
    "isaacgym-preview3",
    "isaacgym-preview4",
    "omniverse-isaacgym",
    "isaaclab",
    "isaaclab-single-agent",
    "isaaclab-multi-agent",
}


def _base_class_names(env: Any) -> List[str]:
    # [compat] only the direct base classes of the env and of env.unwrapped are inspected
    classes = list(type(env).__bases__)
    try:
        classes += list(type(env.unwrapped).__bases__)
    except Exception:
        pass
    return sorted({f"{base.__module__}.{base.__qualname__}" for base in classes})


def _matches(patterns: List[str], names: List[str]) -> bool:
    return any(pattern in name or re.match(pattern, name) for pattern in patterns for name in names)


def _detect(env: Any, verbose: bool) -> str:
    names = _base_class_names(env)
    if verbose:
        logger.info(f"Environment wrapper: 'auto' (class: {', '.join(names)})")
    for patterns, tag in _DETECTION_RULES:
        if _matches(patterns, names):
            if tag == "isaaclab-*":
                unwrapped = getattr(env, "unwrapped", env)
                return "isaaclab-multi-agent" if hasattr(unwrapped, "possible_agents") else "isaaclab-single-agent"
            return tag
    raise ValueError(f"Unknown wrapper type: {names}")


def wrap_env(env: Any, wrapper: str = "auto", verbose: bool = True) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so that it exchanges torch tensors with agents and trainers.

    :param env: the environment (gymnasium env or vector env, gym env or vector env, PettingZoo parallel env).
    :param wrapper: ``"auto"`` to detect the type from the env's base classes, or an explicit tag
        (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``; Isaac/Brax/DeepMind/robosuite/Bi-DexHands tags are
        recognised but not supported by skrl_like).
    :param verbose: log the detected classes and the chosen wrapper.
    """
    tag = _detect(env, verbose) if wrapper == "auto" else wrapper
    if tag.startswith("isaaclab") and tag not in ("isaaclab-single-agent", "isaaclab-multi-agent"):
        unwrapped = getattr(env, "unwrapped", env)
        tag = "isaaclab-multi-agent" if hasattr(unwrapped, "possible_agents") else "isaaclab-single-agent"

    if tag == "gymnasium":
        wrapped: Union[Wrapper, MultiAgentEnvWrapper] = GymnasiumWrapper(env)
    elif tag == "gym":
        wrapped = GymWrapper(env)
    elif tag == "pettingzoo":
        wrapped = PettingZooWrapper(env)
    elif tag in _UNSUPPORTED_TAGS:
        raise ValueError(
            f"Environment wrapper '{tag}' is not supported in skrl_like (its simulator is out of scope): wrap the "
            "environment as a gymnasium env, or use skrl for this simulator"
        )
    else:
        raise ValueError(f"Unknown wrapper type: {tag}")
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
