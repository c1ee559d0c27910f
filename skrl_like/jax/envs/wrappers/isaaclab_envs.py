"""``IsaacLabWrapper`` and ``IsaacLabMultiAgentWrapper``: Isaac Lab environments (torch tensors) for JAX agents.

Reset, step and the observation groups are :mod:`skrl_like.core.envs.isaaclab_env`; this module supplies only the
hand-over between the env's torch tensors and JAX arrays. With the ``"jax"`` backend both directions go through
DLPack: an array and a tensor on the same device share memory, so nothing passes through the host. The env's
outputs are copied on the device before they are handed over, because JAX arrays are immutable while Isaac Lab
writes its reset flags (and an env may write its other buffers) in place at the next step. Where the env runs on a GPU but JAX has
only its CPU, the tensors go through the host (a warning says so once). With the ``"numpy"`` backend the outputs are
NumPy copies on the host.

torch is imported when a wrapper is made, not with this module: the JAX backend installs without torch, and an
Isaac Lab environment cannot exist without it.
"""

from typing import Any

import gymnasium
import jax
import jax.dlpack
import numpy as np

from skrl_like import logger
from skrl_like.core.envs.isaaclab_env import IsaacLabMultiAgentWrapperCore, IsaacLabWrapperCore
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, Wrapper


def _import_torch() -> Any:
    try:
        import torch
        import torch.utils.dlpack  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "The Isaac Lab wrapper of the JAX backend needs torch (Isaac Lab environments exchange torch tensors): "
            "install torch beside jax"
        ) from error
    return torch


class _DLPackHandOver:
    """The JAX side of :mod:`skrl_like.core.envs.isaaclab_env` (its hooks)."""

    def _setup_backend(self) -> None:
        super()._setup_backend()
        self._torch = _import_torch()
        self._env_device = self._torch.device(getattr(self._unwrapped, "device", "cpu"))
        # DLPack shares memory only within one device kind; JAX on its CPU cannot read a CUDA tensor
        self._same_device_kind = (self._env_device.type == "cuda") == (self.device.platform == "gpu")
        if self._jax and not self._same_device_kind:
            logger.warning(
                f"The Isaac Lab environment runs on {self._env_device} but JAX on {self.device}: every step's tensors "
                "go through the host. Install JAX with GPU support (jax[cuda12]) to keep them on the device"
            )

    def _action_to_env(self, space: gymnasium.Space, actions: Any) -> Any:
        from skrl_like.torch.utils.spaces import unflatten_tensorized_space

        torch = self._torch
        if isinstance(actions, jax.Array) and self._same_device_kind:
            tensor = torch.utils.dlpack.from_dlpack(actions)
        else:  # NumPy actions, or a JAX array that cannot be shared with the env's device: through the host
            array = np.asarray(actions)
            tensor = torch.from_numpy(array if array.flags.writeable else array.copy())
        return unflatten_tensorized_space(space, tensor.to(self._env_device))

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> Any:
        from skrl_like.torch.utils.spaces import flatten_tensorized_space, tensorize_space

        return self._hand_over(flatten_tensorized_space(tensorize_space(space, observation)))

    def _column_to_backend(self, values: Any, flag: bool) -> Any:
        # int8 flags, as every JAX wrapper returns them
        return self._hand_over(values.to(self._torch.int8 if flag else self._torch.float32).view(-1, 1))

    def _no_grad(self) -> Any:
        return self._torch.no_grad()

    def _hand_over(self, tensor: Any) -> Any:
        """A JAX (or NumPy) array of its own with ``tensor``'s values."""
        tensor = tensor.detach()
        if self._jax and self._same_device_kind:
            return jax.dlpack.from_dlpack(tensor.clone(memory_format=self._torch.contiguous_format))
        array = tensor.to("cpu", copy=True).numpy()  # copy=True: on the CPU `.to` would return the env's buffer
        return jax.device_put(array, self.device) if self._jax else array


class IsaacLabWrapper(_DLPackHandOver, IsaacLabWrapperCore, Wrapper):
    """Wrap a single-agent Isaac Lab environment (``DirectRLEnv``, ``ManagerBasedRLEnv``) for JAX agents.

    ``reset()`` resets the env the first time only (then returns the last observations: the env resets its
    sub-environments itself); observations are the ``"policy"`` group, flat ``(num_envs, size)`` float32; rewards
    float32 and terminated/truncated int8, ``(num_envs, 1)``; :meth:`state` is the ``"critic"`` group (``None`` if
    the env has none); ``render()`` does nothing. See the module docstring for how tensors cross to JAX.

    :param env: the Isaac Lab environment (as ``gymnasium.make`` returns it, or unwrapped).
    """


class IsaacLabMultiAgentWrapper(_DLPackHandOver, IsaacLabMultiAgentWrapperCore, MultiAgentEnvWrapper):
    """Wrap a multi-agent Isaac Lab environment (``DirectMARLEnv``) for JAX multi-agent algorithms (IPPO, MAPPO).

    Every value is a dict keyed by agent name: flat observations ``(num_envs, size)``, rewards float32 and
    terminated/truncated int8 ``(num_envs, 1)``; :meth:`state` is the env's ``state()``, flat.

    :param env: the Isaac Lab ``DirectMARLEnv`` (as ``gymnasium.make`` returns it, or unwrapped).
    """


__all__ = ["IsaacLabMultiAgentWrapper", "IsaacLabWrapper"]
