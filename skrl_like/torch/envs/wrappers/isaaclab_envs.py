"""``IsaacLabWrapper`` and ``IsaacLabMultiAgentWrapper``: Isaac Lab environments, torch tensors on the env's device.

Reset, step and the observation groups are :mod:`skrl_like.core.envs.isaaclab_env`; this module supplies only the
conversions, and they are views where they can be: the env's tensors reach the agent on the env's device, without a
copy or a host sync (no ``.item()``, ``.cpu()`` or NumPy conversion in a step).
"""

from typing import Any

import gymnasium
import torch

from skrl_like.core.envs.isaaclab_env import IsaacLabMultiAgentWrapperCore, IsaacLabWrapperCore
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper
from skrl_like.torch.utils.spaces import flatten_tensorized_space, tensorize_space, unflatten_tensorized_space


class _TensorHandOver:
    """The torch side of :mod:`skrl_like.core.envs.isaaclab_env` (its hooks): reshapes, no copies."""

    def _action_to_env(self, space: gymnasium.Space, actions: torch.Tensor) -> Any:
        return unflatten_tensorized_space(space, actions)

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> torch.Tensor:
        return flatten_tensorized_space(tensorize_space(space, observation))

    def _column_to_backend(self, values: torch.Tensor, flag: bool) -> torch.Tensor:
        return values.view(-1, 1)

    def _no_grad(self) -> Any:
        return torch.no_grad()


class IsaacLabWrapper(_TensorHandOver, IsaacLabWrapperCore, Wrapper):
    """Wrap a single-agent Isaac Lab environment (``DirectRLEnv``, ``ManagerBasedRLEnv``) for torch agents.

    ``reset()`` resets the env the first time only (then returns the last observations: the env resets its
    sub-environments itself); observations are the ``"policy"`` group, flat ``(num_envs, size)``; rewards and
    terminated/truncated are ``(num_envs, 1)`` views of the env's tensors; :meth:`state` is the ``"critic"`` group
    (``None`` if the env has none); ``render()`` does nothing.

    :param env: the Isaac Lab environment (as ``gymnasium.make`` returns it, or unwrapped).
    """


class IsaacLabMultiAgentWrapper(_TensorHandOver, IsaacLabMultiAgentWrapperCore, MultiAgentEnvWrapper):
    """Wrap a multi-agent Isaac Lab environment (``DirectMARLEnv``) for torch multi-agent algorithms (IPPO, MAPPO).

    Every value is a dict keyed by agent name: flat observations ``(num_envs, size)``, rewards and
    terminated/truncated ``(num_envs, 1)``; :meth:`state` is the env's ``state()``, flat.

    :param env: the Isaac Lab ``DirectMARLEnv`` (as ``gymnasium.make`` returns it, or unwrapped).
    """


__all__ = ["IsaacLabMultiAgentWrapper", "IsaacLabWrapper"]
