"""Environment wrappers for the JAX backend and ``wrap_env``, which picks the right one."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.detection import resolve_wrapper_tag
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.jax.envs.wrappers.gym_envs import GymWrapper
from skrl_like.jax.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.jax.envs.wrappers.gymnax_envs import GymnaxWrapper
from skrl_like.jax.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["wrap_env", "Wrapper", "MultiAgentEnvWrapper", "GymnaxWrapper"]


def wrap_env(
    env: Any, wrapper: str = "auto", verbose: bool = True, **wrapper_kwargs: Any
) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so agents and trainers can use it.

    :param env: the environment (gymnasium, gym or PettingZoo parallel API, or a gymnax environment).
    :param wrapper: ``"auto"`` detects the library from the environment's base classes; or a tag:
        ``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"gymnax"`` (Isaac/Brax/DeepMind/robosuite/Bi-DexHands tags are
        recognised but not supported by skrl_like).
    :param verbose: log the detected base classes and the chosen wrapper.
    :param wrapper_kwargs: for gymnax environments, :class:`GymnaxWrapper`'s ``num_envs``, ``env_params`` and
        ``seed`` (the other environments bring their own).
    """
    classes = {
        "gymnasium": GymnasiumWrapper,
        "gym": GymWrapper,
        "pettingzoo": PettingZooWrapper,
        "gymnax": GymnaxWrapper,
    }
    tag = resolve_wrapper_tag(env, wrapper, verbose, jax_native=True)
    if wrapper_kwargs and tag != "gymnax":
        raise TypeError(
            f"wrap_env got {sorted(wrapper_kwargs)} for a {tag} environment: only gymnax environments take wrapper "
            "arguments (num_envs, env_params, seed); a gymnasium env is vectorized with gymnasium.make_vec"
        )
    wrapped = classes[tag](env, **wrapper_kwargs)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
