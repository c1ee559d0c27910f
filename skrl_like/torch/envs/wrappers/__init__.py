"""Environment wrappers (torch): ``wrap_env`` picks the wrapper that fits an environment."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.detection import resolve_wrapper_tag
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.torch.envs.wrappers.gym_envs import GymWrapper
from skrl_like.torch.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.torch.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["MultiAgentEnvWrapper", "Wrapper", "wrap_env"]


def wrap_env(env: Any, wrapper: str = "auto", verbose: bool = True) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so that it exchanges torch tensors with agents and trainers.

    :param env: the environment (gymnasium env or vector env, gym env or vector env, PettingZoo parallel env).
    :param wrapper: ``"auto"`` to detect the type from the env's base classes, or an explicit tag
        (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``; Isaac/Brax/DeepMind/robosuite/Bi-DexHands tags are
        recognised but not supported by skrl_like).
    :param verbose: log the detected classes and the chosen wrapper.
    """
    classes = {"gymnasium": GymnasiumWrapper, "gym": GymWrapper, "pettingzoo": PettingZooWrapper}
    wrapped = classes[resolve_wrapper_tag(env, wrapper, verbose)](env)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
