"""``PettingZooWrapper``: PettingZoo parallel-API multi-agent environments, exchanging torch tensors.

Every output is a dict keyed by agent name: flat observations ``(num_envs, size)``, rewards float32
``(num_envs, 1)`` and terminated/truncated bool ``(num_envs, 1)``. Reset, step and the NaN/inf checks are
``skrl_like.core.envs.pettingzoo_env``; this module supplies only the conversions to and from tensors.
"""

from typing import Any, Dict, Tuple

import gymnasium
import numpy as np
import torch

from skrl_like.core.envs.pettingzoo_env import PettingZooWrapperCore
from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper
from skrl_like.torch.utils.spaces import (
    flatten_tensorized_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)


class PettingZooWrapper(PettingZooWrapperCore, MultiAgentEnvWrapper):
    __doc__ = PettingZooWrapperCore.__doc__

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> torch.Tensor:
        return flatten_tensorized_space(tensorize_space(space, observation, device=self._device))

    def _action_to_env(self, space: gymnasium.Space, action: Any) -> Any:
        return untensorize_space(space, unflatten_tensorized_space(space, action))

    def _columns_to_backend(
        self, rewards: Dict[str, np.ndarray], terminated: Dict[str, np.ndarray], truncated: Dict[str, np.ndarray]
    ) -> Tuple[Dict[str, torch.Tensor], ...]:
        # float32 rewards and bool flags already: only the move to the wrapper's device is left
        return tuple(
            {uid: torch.from_numpy(value).to(self._device) for uid, value in column.items()}
            for column in (rewards, terminated, truncated)
        )


__all__ = ["PettingZooWrapper"]
