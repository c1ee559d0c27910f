"""``PettingZooWrapper``: PettingZoo parallel-API multi-agent environments.

Every output is a dict keyed by agent name: flat observations ``(num_envs, size)``, rewards float32
``(num_envs, 1)`` and terminated/truncated bool ``(num_envs, 1)``. PettingZoo itself is not imported: the
wrapper relies only on the parallel API (``reset``, ``step``, ``state``, the per-agent space dicts).
"""

from collections.abc import Mapping
from typing import Any, Dict, Tuple

import numpy as np
import torch

from skrl_like.torch.envs.wrappers.base import MultiAgentEnvWrapper
from skrl_like.torch.utils.spaces import (
    flatten_tensorized_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)


class PettingZooWrapper(MultiAgentEnvWrapper):
    """Wrap a PettingZoo ``ParallelEnv`` so that it exchanges per-agent torch tensors.

    :param env: the parallel environment (``pettingzoo.ParallelEnv`` or a wrapper of one).
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)

    @property
    def observation_spaces(self) -> Dict[str, Any]:
        """Observation space of each possible agent."""
        spaces = getattr(self._unwrapped, "observation_spaces", None)
        if spaces is None:
            spaces = {uid: self._env.observation_space(uid) for uid in self.possible_agents}
        return spaces

    @property
    def action_spaces(self) -> Dict[str, Any]:
        """Action space of each possible agent."""
        spaces = getattr(self._unwrapped, "action_spaces", None)
        if spaces is None:
            spaces = {uid: self._env.action_space(uid) for uid in self.possible_agents}
        return spaces

    def _observations(self, observations: Mapping) -> Dict[str, torch.Tensor]:
        spaces = self.observation_spaces
        return {
            uid: flatten_tensorized_space(tensorize_space(spaces[uid], value, device=self._device))
            for uid, value in observations.items()
        }

    def _column(self, values: Mapping, dtype: torch.dtype) -> Dict[str, torch.Tensor]:
        return {
            uid: torch.as_tensor(np.asarray(value), dtype=dtype, device=self._device).view(self.num_envs, -1)
            for uid, value in values.items()
        }

    def step(self, actions: Mapping[str, torch.Tensor]) -> Tuple[Dict[str, Any], ...]:
        """Step with ``{agent: (num_envs, action_size) tensor}``.

        :return: ``(observations, rewards, terminated, truncated, infos)`` dicts keyed by agent.
        """
        spaces = self.action_spaces
        env_actions = {
            uid: untensorize_space(spaces[uid], unflatten_tensorized_space(spaces[uid], action))
            for uid, action in actions.items()
        }
        observations, rewards, terminated, truncated, infos = self._env.step(env_actions)
        return (
            self._observations(observations),
            self._column(rewards, torch.float32),
            self._column(terminated, torch.bool),
            self._column(truncated, torch.bool),
            infos,
        )

    def state(self) -> torch.Tensor:
        """The environment's global state, flat ``(num_envs, size)``."""
        space = next(iter(self.state_spaces.values()))
        return flatten_tensorized_space(tensorize_space(space, self._env.state(), device=self._device))

    def reset(self) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
        """Reset the environment: ``(observations, infos)`` keyed by agent."""
        outputs = self._env.reset()
        if isinstance(outputs, Mapping):
            # older PettingZoo releases return only the observations
            observations, infos = outputs, {uid: {} for uid in self.possible_agents}
        else:
            observations, infos = outputs
        return self._observations(observations), infos

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment."""
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()
