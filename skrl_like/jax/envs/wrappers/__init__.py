"""Environment wrappers for the JAX backend and ``wrap_env``, which picks the right one."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.detection import resolve_wrapper_tag
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.jax.envs.wrappers.brax_envs import BraxWrapper, PlaygroundWrapper
from skrl_like.jax.envs.wrappers.gym_envs import GymWrapper
from skrl_like.jax.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.jax.envs.wrappers.gymnax_envs import GymnaxWrapper
from skrl_like.jax.envs.wrappers.isaaclab_envs import IsaacLabMultiAgentWrapper, IsaacLabWrapper
from skrl_like.jax.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["wrap_env", "Wrapper", "MultiAgentEnvWrapper", "GymnaxWrapper"]


def wrap_env(
    env: Any, wrapper: str = "auto", verbose: bool = True, check_finite: bool = True, **wrapper_kwargs: Any
) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so agents and trainers can use it.

    :param env: the environment (gymnasium, gym or PettingZoo parallel API, a gymnax, Brax or MuJoCo Playground
        environment, or an Isaac Lab environment: its torch tensors cross to JAX by DLPack).
    :param wrapper: ``"auto"`` detects the library from the environment's base classes; or a tag:
        ``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"gymnax"``, ``"brax"``, ``"playground"``, ``"isaaclab"``
        (single- or multi-agent, detected), ``"isaaclab-single-agent"``, ``"isaaclab-multi-agent"`` (Isaac Gym/
        DeepMind/robosuite/Bi-DexHands tags are recognised but not supported by skrl_like).
    :param verbose: log the detected base classes and the chosen wrapper.
    :param check_finite: check every reset's and step's observations and rewards for NaN/inf (gymnasium, gym and
        PettingZoo envs; a gymnax env's arrays stay on the device and are not checked); ``False`` skips the check,
        e.g. for envs that use ``inf`` as an observation value.
    :param wrapper_kwargs: for gymnax environments, :class:`GymnaxWrapper`'s ``num_envs``, ``env_params`` and
        ``seed``; for Brax and Playground environments, :class:`BraxWrapper`'s ``num_envs``, ``episode_length``,
        ``action_repeat``, ``full_reset`` and ``seed`` (the other environments bring their own).
    """
    classes = {
        "gymnasium": GymnasiumWrapper,
        "gym": GymWrapper,
        "pettingzoo": PettingZooWrapper,
    }
    tag = resolve_wrapper_tag(env, wrapper, verbose, jax_native=True)
    jax_native = {"gymnax": GymnaxWrapper, "brax": BraxWrapper, "playground": PlaygroundWrapper}
    if wrapper_kwargs and tag not in jax_native:
        raise TypeError(
            f"wrap_env got {sorted(wrapper_kwargs)} for a {tag} environment: only gymnax, Brax and Playground "
            "environments take wrapper arguments (num_envs, ...); a gymnasium env is vectorized with gymnasium.make_vec"
        )
    isaaclab = {"isaaclab-single-agent": IsaacLabWrapper, "isaaclab-multi-agent": IsaacLabMultiAgentWrapper}
    if tag in jax_native:
        wrapped = jax_native[tag](env, **wrapper_kwargs)
    elif tag in isaaclab:  # Isaac Lab envs hand over their own device tensors: no NaN/inf scan of them per step
        wrapped = isaaclab[tag](env)
    else:
        wrapped = classes[tag](env, check_finite=check_finite)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
