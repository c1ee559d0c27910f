"""Wrapper for OpenAI Gym environments (optional dependency), single or vectorized."""

from typing import Any, Tuple

import gymnasium
import jax
import numpy as np

from skrl_like.jax.envs.wrappers.base import Wrapper, check_finite
from skrl_like.jax.envs.wrappers.gymnasium_envs import _vector_actions, flat_observations
from skrl_like.jax.utils.spaces import convert_gym_space, unflatten_tensorized_space, untensorize_space


def _version_tuple(text: str) -> Tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(character for character in part if character.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


class GymWrapper(Wrapper):
    """Wrap an OpenAI Gym environment (single or ``gym.vector.VectorEnv``) for the JAX backend.

    :param env: the gym environment. Its spaces are converted to gymnasium spaces; gym < 0.25 (4-value ``step``,
        truncation in ``info["TimeLimit.truncated"]``) is supported. Gym vector envs reset finished
        sub-environments in the same step, so no autoreset handling is needed.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        import gym  # optional dependency, only needed here

        if not hasattr(np, "bool8"):  # old gym versions still use the removed alias
            np.bool8 = np.bool_
        self._vectorized = isinstance(env, gym.vector.VectorEnv)
        self._deprecated_api = _version_tuple(gym.__version__) < (0, 25)
        if self._vectorized:
            self._observation_space = convert_gym_space(env.single_observation_space)
            self._action_space = convert_gym_space(env.single_action_space)
            self._reset_once = True
            self._observations: Any = None
            self._info: Any = {}
        else:
            self._observation_space = convert_gym_space(env.observation_space)
            self._action_space = convert_gym_space(env.action_space)

    @property
    def observation_space(self) -> gymnasium.Space:
        """The single-environment observation space, as a gymnasium space."""
        return self._observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """The single-environment action space, as a gymnasium space."""
        return self._action_space

    def _outputs(self, *arrays: np.ndarray) -> Tuple[Any, ...]:
        return jax.device_put(arrays, self.device) if self._jax else arrays

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step the environment: ``(observations, rewards, terminated, truncated, info)``.

        :param actions: flat ``(num_envs, size)`` actions (NumPy or JAX array).
        """
        if isinstance(actions, jax.Array):
            actions = np.asarray(jax.device_get(actions))
        actions = untensorize_space(
            self._action_space,
            unflatten_tensorized_space(self._action_space, actions),
            squeeze_batch_dimension=not self._vectorized,
        )
        if self._vectorized:
            actions = _vector_actions(self._action_space, actions)
        if self._deprecated_api:
            observations, rewards, terminated, info = self._env.step(actions)
            if self._vectorized:
                truncated = np.array([item.get("TimeLimit.truncated", False) for item in info], dtype=np.bool_)
                terminated = np.logical_and(terminated, np.logical_not(truncated))
                info = {}
            else:
                truncated = info.get("TimeLimit.truncated", False)
                if truncated:
                    terminated = False
        else:
            observations, rewards, terminated, truncated, info = self._env.step(actions)
        observations = flat_observations(self._observation_space, observations)
        rewards = np.asarray(rewards, dtype=np.float32).reshape(self.num_envs, -1)
        check_finite(observations, rewards, self._unwrapped)
        terminated = np.asarray(terminated, dtype=np.int8).reshape(self.num_envs, -1)
        truncated = np.asarray(truncated, dtype=np.int8).reshape(self.num_envs, -1)
        if self._vectorized:
            self._observations, self._info = observations, info
        observations, rewards, terminated, truncated = self._outputs(observations, rewards, terminated, truncated)
        return observations, rewards, terminated, truncated, info

    def reset(self) -> Tuple[Any, Any]:
        """Reset the environment (a vector env only on the first call): ``(observations, info)``."""
        if self._vectorized and not self._reset_once:
            return self._outputs(self._observations)[0], self._info
        if self._deprecated_api:
            observations, info = self._env.reset(), {}
        else:
            observations, info = self._env.reset()
        observations = flat_observations(self._observation_space, observations)
        check_finite(observations, None, self._unwrapped)
        if self._vectorized:
            self._observations, self._info, self._reset_once = observations, info, False
        return self._outputs(observations)[0], info

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment (gym vector envs cannot render: ``None``)."""
        if self._vectorized:
            return None
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()


__all__ = ["GymWrapper"]
