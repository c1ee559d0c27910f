"""``GymWrapper``: OpenAI Gym environments and vector environments (``gym`` is an optional dependency).

Spaces are converted to gymnasium spaces. For ``gym < 0.25`` the old API is used: ``step`` returns 4 values and
truncation is read from ``info["TimeLimit.truncated"]``; ``reset`` returns only the observation. Gym vector envs
reset a sub-environment inside its terminal step, so ``next_states`` of a done sub-environment is the first
observation of its next episode, as with ``GymnasiumWrapper``. The NaN/inf check is the same as
``GymnasiumWrapper``'s (``check_finite``).
"""

from typing import Any, Tuple

import numpy as np
import torch

from skrl_like.torch.envs.wrappers.gymnasium_envs import _ArrayEnvWrapper
from skrl_like.torch.utils.spaces import convert_gym_space


class GymWrapper(_ArrayEnvWrapper):
    """Wrap an OpenAI Gym env or vector env so that it exchanges torch tensors with agents and trainers.

    :param env: a ``gym.Env`` or ``gym.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: check every step's observations and rewards for NaN/inf and raise a ``ValueError`` that
        names the env and the step (set ``False`` to skip it).
    """

    def __init__(self, env: Any, check_finite: bool = True) -> None:
        super().__init__(env)
        import gym  # imported here: gym is optional and unmaintained

        # old gym releases still refer to np.bool8, which NumPy 2 removed
        if not hasattr(np, "bool8"):
            np.bool8 = np.bool_

        version = tuple(int(part) for part in gym.__version__.split(".")[:2] if part.isdigit())
        self._deprecated_api = version < (0, 25)
        vectorized = isinstance(env, gym.vector.VectorEnv)
        if vectorized:
            observation_space = convert_gym_space(env.single_observation_space)
            action_space = convert_gym_space(env.single_action_space)
        else:
            observation_space = convert_gym_space(env.observation_space)
            action_space = convert_gym_space(env.action_space)
        self._setup(observation_space, action_space, vectorized, check_finite)

    def _env_reset(self) -> Tuple[Any, Any]:
        if self._deprecated_api:
            return self._env.reset(), {}
        return self._env.reset()

    def reset(self) -> Tuple[torch.Tensor, Any]:
        """Reset the env; a vector env is reset only on the first call (it resets its sub-environments itself).

        :return: ``(observations (num_envs, size), info)``.
        """
        if self._vectorized:
            if self._reset_once:
                observation, self._info = self._env_reset()
                if self.check_finite:
                    self._check_observations(observation, "reset")
                self._observation = self._observations_to_tensor(observation)
                self._reset_once = False
            return self._observation, self._info
        observation, info = self._env_reset()
        if self.check_finite:
            self._check_observations(observation, "reset")
        return self._observations_to_tensor(observation), info

    def step(self, actions: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        """Step every (sub-)environment: ``(next_states, rewards, terminated, truncated, info)``.

        :param actions: ``(num_envs, action_size)`` (``(num_envs, 1)`` for ``Discrete``).
        """
        self._step_count += 1
        if self._deprecated_api:
            observation, reward, terminated, info = self._env.step(self._actions_to_env(actions))
            if self._vectorized:
                # old vector envs return one info dict per sub-environment
                truncated = np.array([item.get("TimeLimit.truncated", False) for item in info], dtype=np.bool_)
                terminated = np.logical_and(terminated, np.logical_not(truncated))
                info = {}
            else:
                truncated = bool(info.get("TimeLimit.truncated", False))
                if truncated:
                    terminated = False
        else:
            observation, reward, terminated, truncated, info = self._env.step(self._actions_to_env(actions))
        if self.check_finite:
            self._check_observations(observation, f"step {self._step_count}")
            self._check_rewards(reward)

        num_envs = self._num_envs
        next_states = self._observations_to_tensor(observation)
        rewards = torch.as_tensor(np.asarray(reward), dtype=torch.float32, device=self._device).view(num_envs, -1)
        terminated = torch.as_tensor(np.asarray(terminated), dtype=torch.bool, device=self._device).view(num_envs, -1)
        truncated = torch.as_tensor(np.asarray(truncated), dtype=torch.bool, device=self._device).view(num_envs, -1)
        if self._vectorized:
            self._observation, self._info = next_states, info
        return next_states, rewards, terminated, truncated, info

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render a single env (vector gym envs are not rendered: ``None``)."""
        if self._vectorized:
            return None
        return self._env.render(*args, **kwargs)
