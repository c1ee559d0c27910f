"""Base classes of the torch environment wrappers: ``Wrapper`` (single agent) and ``MultiAgentEnvWrapper``.

Outputs are torch tensors on ``wrapper.device``: flat observations ``(num_envs, size)`` (float32 for ``Box``,
int32 for discrete spaces), rewards float32 ``(num_envs, 1)``, terminated/truncated bool ``(num_envs, 1)``.
The shared behaviour (attribute forwarding, spaces, the abstract API) is in ``skrl_like.core.envs.wrappers``.
"""

from typing import Any

import torch

from skrl_like import config
from skrl_like.core.envs.wrappers import MultiAgentEnvWrapperCore, WrapperCore


class _TorchOutputs:
    def _parse_device(self, unwrapped: Any) -> torch.device:
        if hasattr(unwrapped, "device"):
            return config.torch.parse_device(unwrapped.device)
        return config.torch.device


class Wrapper(_TorchOutputs, WrapperCore):
    __doc__ = WrapperCore.__doc__


class MultiAgentEnvWrapper(_TorchOutputs, MultiAgentEnvWrapperCore):
    __doc__ = MultiAgentEnvWrapperCore.__doc__
