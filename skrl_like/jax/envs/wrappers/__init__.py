"""Environment wrappers for the JAX backend and ``wrap_env``, which picks the right one."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.wrapping import resolve_wrapper_tag
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.jax.envs.wrappers.gym_envs import GymWrapper
from skrl_like.jax.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.jax.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["wrap_env", "Wrapper", "MultiAgentEnvWrapper"]


def wrap_env(env: Any, wrapper: str = "auto", verbose: bool = True) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so agents and trainers can use it.

    :param env: the environment (gymnasium, gym or PettingZoo parallel API).
    :param wrapper: ``"auto"`` detects the library from the environment's base classes; or a tag:
        ``"gymnasium"``, ``"gym"``, ``"pettingzoo"`` (Isaac/Brax/DeepMind/robosuite/Bi-DexHands tags are recognised
        but not supported by skrl_like).
    :param verbose: log the detected base classes and the chosen wrapper.
    """
    classes = {"gymnasium": GymnasiumWrapper, "gym": GymWrapper, "pettingzoo": PettingZooWrapper}
    wrapped = classes[resolve_wrapper_tag(env, wrapper, verbose)](env)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
