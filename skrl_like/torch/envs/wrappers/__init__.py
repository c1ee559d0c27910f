"""Environment wrappers (torch): ``wrap_env`` picks the wrapper that fits an environment."""

from typing import Any, Union

from skrl_like import logger
from skrl_like.core.envs.detection import resolve_wrapper_tag
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.torch.envs.wrappers.gym_envs import GymWrapper
from skrl_like.torch.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.torch.envs.wrappers.isaaclab_envs import IsaacLabMultiAgentWrapper, IsaacLabWrapper
from skrl_like.torch.envs.wrappers.pettingzoo_envs import PettingZooWrapper

__all__ = ["MultiAgentEnvWrapper", "Wrapper", "wrap_env"]


def wrap_env(
    env: Any, wrapper: str = "auto", verbose: bool = True, check_finite: bool = True
) -> Union[Wrapper, MultiAgentEnvWrapper]:
    """Wrap an environment so that it exchanges torch tensors with agents and trainers.

    :param env: the environment (gymnasium env or vector env, gym env or vector env, PettingZoo parallel env, Isaac
        Lab env).
    :param wrapper: ``"auto"`` to detect the type from the env's base classes, or an explicit tag
        (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"isaaclab"`` (single- or multi-agent, detected),
        ``"isaaclab-single-agent"``, ``"isaaclab-multi-agent"``; Isaac Gym/Brax/DeepMind/robosuite/Bi-DexHands tags
        are recognised but not supported by skrl_like).
    :param verbose: log the detected classes and the chosen wrapper.
    :param check_finite: check every reset's and step's observations and rewards for NaN/inf and raise a
        ``ValueError`` that names the env and the step; ``False`` skips the check, e.g. for envs that use ``inf`` as an
        observation value.
    """
    tag = resolve_wrapper_tag(env, wrapper, verbose)
    # Isaac Lab envs hand over their own device tensors: no NaN/inf scan of them per step
    isaaclab = {"isaaclab-single-agent": IsaacLabWrapper, "isaaclab-multi-agent": IsaacLabMultiAgentWrapper}
    if tag in isaaclab:
        wrapped = isaaclab[tag](env)
    else:
        classes = {"gymnasium": GymnasiumWrapper, "gym": GymWrapper, "pettingzoo": PettingZooWrapper}
        wrapped = classes[tag](env, check_finite=check_finite)
    if verbose:
        logger.info(f"Environment wrapper: {type(wrapped).__name__}")
    return wrapped
