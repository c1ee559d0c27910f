"""Environment wrappers (torch): ``wrap_env`` picks the wrapper that fits an environment."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.detection import resolve_wrapper_tag
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.torch.envs.wrappers.brax_envs import BraxWrapper, PlaygroundWrapper
from skrl_like.torch.envs.wrappers.gym_envs import GymWrapper
from skrl_like.torch.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.torch.envs.wrappers.isaaclab_envs import IsaacLabMultiAgentWrapper, IsaacLabWrapper
from skrl_like.torch.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["MultiAgentEnvWrapper", "Wrapper", "wrap_env"]


def wrap_env(
    env: Any, wrapper: str = "auto", verbose: bool = True, check_finite: bool = True, **wrapper_kwargs: Any
) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so that it exchanges torch tensors with agents and trainers.

    :param env: the environment (gymnasium env or vector env, gym env or vector env, PettingZoo parallel env, Isaac
        Lab env, Brax or MuJoCo Playground env: stepped in JAX, its arrays handed over by DLPack).
    :param wrapper: ``"auto"`` to detect the type from the env's base classes, or an explicit tag
        (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"brax"``, ``"playground"``, ``"isaaclab"`` (single- or
        multi-agent, detected), ``"isaaclab-single-agent"``, ``"isaaclab-multi-agent"``; Isaac Gym/DeepMind/robosuite/
        Bi-DexHands tags are recognised but not supported by skrl_like).
    :param verbose: log the detected classes and the chosen wrapper.
    :param check_finite: check every reset's and step's observations and rewards for NaN/inf and raise a
        ``ValueError`` that names the env and the step; ``False`` skips the check, e.g. for envs that use ``inf`` as an
        observation value.
    :param wrapper_kwargs: for Brax and Playground environments, :class:`BraxWrapper`'s ``num_envs``,
        ``episode_length``, ``action_repeat``, ``full_reset`` and ``seed`` (the other environments bring their own).
    """
    tag = resolve_wrapper_tag(env, wrapper, verbose)
    jax_native = {"brax": BraxWrapper, "playground": PlaygroundWrapper}
    if wrapper_kwargs and tag not in jax_native:
        raise TypeError(
            f"wrap_env got {sorted(wrapper_kwargs)} for a {tag} environment: only Brax and Playground environments "
            "take wrapper arguments (num_envs, ...); a gymnasium env is vectorized with gymnasium.make_vec"
        )
    # Isaac Lab envs hand over their own device tensors: no NaN/inf scan of them per step
    isaaclab = {"isaaclab-single-agent": IsaacLabWrapper, "isaaclab-multi-agent": IsaacLabMultiAgentWrapper}
    if tag in isaaclab:
        wrapped = isaaclab[tag](env)
    elif tag in jax_native:  # the env's arrays stay on the device: no NaN/inf scan of them per step
        wrapped = jax_native[tag](env, **wrapper_kwargs)
    else:
        classes = {"gymnasium": GymnasiumWrapper, "gym": GymWrapper, "pettingzoo": PettingZooWrapper}
        wrapped = classes[tag](env, check_finite=check_finite)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
