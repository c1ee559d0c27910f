"""Wrapper for PettingZoo environments (parallel API)."""

from collections.abc import Mapping as MappingType
from typing import Any, Mapping, Tuple

import jax
import numpy as np

from skrl_like.jax.envs.wrappers.base import MultiAgentEnvWrapper, check_finite, flat_observations
from skrl_like.jax.utils.spaces import unflatten_tensorized_space, untensorize_space


class PettingZooWrapper(MultiAgentEnvWrapper):
    """Wrap a PettingZoo parallel environment for the JAX backend (one environment, several agents).

    :param env: a PettingZoo ``ParallelEnv``. Every value exchanged is a dict keyed by agent name: observations
        flat ``(1, size)``, rewards float32 ``(1, 1)``, terminated/truncated int8 ``(1, 1)``.
    """

    def _put(self, value: Any) -> Any:
        return jax.device_put(value, self.device) if self._jax else value

    def _observations(self, observations: Mapping[str, Any]) -> dict:
        flat = {uid: flat_observations(self.observation_spaces[uid], value) for uid, value in observations.items()}
        for value in flat.values():
            check_finite(value, None, self._unwrapped)
        return flat

    def step(self, actions: Mapping[str, Any]) -> Tuple[Mapping[str, Any], ...]:
        """Step the environment: ``(observations, rewards, terminated, truncated, infos)``, dicts keyed by agent.

        :param actions: ``{agent: flat (1, size) action}`` (NumPy or JAX arrays).
        """
        environment_actions = {}
        for uid, value in actions.items():
            if isinstance(value, jax.Array):
                value = np.asarray(jax.device_get(value))
            space = self.action_spaces[uid]
            environment_actions[uid] = untensorize_space(space, unflatten_tensorized_space(space, value))
        observations, rewards, terminated, truncated, infos = self._env.step(environment_actions)
        observations = self._observations(observations)
        rewards = {
            uid: np.asarray(value, dtype=np.float32).reshape(self.num_envs, -1) for uid, value in rewards.items()
        }
        for value in rewards.values():
            check_finite(value, None, self._unwrapped)
        terminated = {
            uid: np.asarray(value, dtype=np.int8).reshape(self.num_envs, -1) for uid, value in terminated.items()
        }
        truncated = {
            uid: np.asarray(value, dtype=np.int8).reshape(self.num_envs, -1) for uid, value in truncated.items()
        }
        return self._put(observations), self._put(rewards), self._put(terminated), self._put(truncated), infos

    def state(self) -> Any:
        """The environment's global state, flat ``(1, size)``."""
        space = next(iter(self.state_spaces.values()))
        return self._put(flat_observations(space, self._env.state()))

    def reset(self) -> Tuple[Mapping[str, Any], Mapping[str, Any]]:
        """Reset the environment: ``(observations, infos)`` keyed by agent."""
        outputs = self._env.reset()
        if isinstance(outputs, MappingType):  # old PettingZoo versions return only the observations
            observations, infos = outputs, {uid: {} for uid in self.possible_agents}
        else:
            observations, infos = outputs
        return self._put(self._observations(observations)), infos

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment."""
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()


__all__ = ["PettingZooWrapper"]
