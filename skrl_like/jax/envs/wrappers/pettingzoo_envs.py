"""``PettingZooWrapper``: PettingZoo parallel-API multi-agent environments, exchanging NumPy or JAX arrays.

Every output is a dict keyed by agent name: flat observations ``(num_envs, size)`` (float32 for ``Box``), rewards
float32 ``(num_envs, 1)`` and terminated/truncated int8 ``(num_envs, 1)``. Reset, step and the NaN/inf checks are
``skrl_like.core.envs.pettingzoo_env``; this module supplies only the conversions to and from the backend's arrays.
"""

from typing import Any, Dict, Tuple

import gymnasium
import jax
import numpy as np

from skrl_like.core.envs.pettingzoo_env import PettingZooWrapperCore
from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, flat_observations
from skrl_like.jax.utils.spaces import unflatten_tensorized_space, untensorize_space


class PettingZooWrapper(PettingZooWrapperCore, MultiAgentEnvWrapper):
    __doc__ = PettingZooWrapperCore.__doc__

    def _put(self, value: Any) -> Any:
        return jax.device_put(value, self.device) if self._jax else value

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> Any:
        return self._put(flat_observations(space, observation))

    def _action_to_env(self, space: gymnasium.Space, action: Any) -> Any:
        if isinstance(action, jax.Array):
            action = np.asarray(jax.device_get(action))
        return untensorize_space(space, unflatten_tensorized_space(space, action))

    def _columns_to_backend(
        self, rewards: Dict[str, np.ndarray], terminated: Dict[str, np.ndarray], truncated: Dict[str, np.ndarray]
    ) -> Tuple[Dict[str, Any], ...]:
        terminated = {uid: value.astype(np.int8) for uid, value in terminated.items()}
        truncated = {uid: value.astype(np.int8) for uid, value in truncated.items()}
        return self._put(rewards), self._put(terminated), self._put(truncated)


__all__ = ["PettingZooWrapper"]
