"""Wrapper for gymnasium environments, single or vectorized (``SyncVectorEnv``, ``AsyncVectorEnv``)."""

from typing import Any, Tuple

import gymnasium
import jax
import numpy as np
from gymnasium import spaces

from skrl_like.core.vector_autoreset import SameStepAutoreset
from skrl_like.jax.envs.wrappers.base import Wrapper, check_finite
from skrl_like.jax.utils.spaces import (
    flatten_tensorized_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)


def _is_vector_env(env: Any) -> bool:
    vector_types = [gymnasium.vector.VectorEnv]
    experimental = getattr(getattr(gymnasium, "experimental", None), "vector", None)  # gymnasium 0.28/0.29
    if experimental is not None and hasattr(experimental, "VectorEnv"):
        vector_types.append(experimental.VectorEnv)
    return isinstance(env, tuple(vector_types))


def _vector_actions(space: gymnasium.Space, actions: Any) -> Any:
    """Batched NumPy actions in the layout a gymnasium >= 1.0 vector env expects (``Discrete`` as ``(num_envs,)``)."""
    if isinstance(space, spaces.Discrete):
        return actions.reshape(-1)
    if isinstance(space, spaces.Tuple):
        return tuple(_vector_actions(child, value) for child, value in zip(space, actions))
    if isinstance(space, spaces.Dict):
        return {key: _vector_actions(space[key], actions[key]) for key in actions}
    return actions


def flat_observations(space: gymnasium.Space, observations: Any) -> np.ndarray:
    """A batch of environment observations as one flat ``(batch, size)`` NumPy array.

    Floating-point observations are float32 (what the models consume); integer ones (discrete spaces) keep their
    integer dtype. A reshape of an array the environment returned is a view, so a float32 ``Box`` costs no copy.
    """
    flat = flatten_tensorized_space(tensorize_space(space, observations, _jax=False), _jax=False)
    if flat.dtype.kind == "f" and flat.dtype != np.float32:
        flat = flat.astype(np.float32)
    return flat


class GymnasiumWrapper(Wrapper):
    """Wrap a gymnasium environment (single or vectorized) for the JAX backend.

    :param env: a ``gymnasium.Env`` or a ``gymnasium.vector.VectorEnv`` (possibly wrapped).

    Vector envs always behave as if they reset finished sub-environments in the same step (see
    :class:`skrl_like.core.vector_autoreset.SameStepAutoreset`): whatever their autoreset mode, a step that reports
    a sub-environment done returns the first observation of its next episode, so no transition ever crosses an
    episode boundary. ``Discrete`` actions given as ``(num_envs, 1)`` are passed to vector envs as ``(num_envs,)``.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._vectorized = _is_vector_env(env)
        if self._vectorized:
            self._observation_space = env.single_observation_space
            self._action_space = env.single_action_space
            autoreset = SameStepAutoreset(env)
            self._autoreset = autoreset if autoreset.active else None
            self._reset_once = True
            self._observations: Any = None
            self._info: Any = {}
        else:
            self._observation_space = env.observation_space
            self._action_space = env.action_space

    @property
    def observation_space(self) -> gymnasium.Space:
        """The single-environment observation space (also for vector envs)."""
        return self._observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """The single-environment action space (also for vector envs)."""
        return self._action_space

    def _to_environment_actions(self, actions: Any) -> Any:
        if isinstance(actions, jax.Array):
            actions = np.asarray(jax.device_get(actions))
        actions = untensorize_space(
            self._action_space,
            unflatten_tensorized_space(self._action_space, actions),
            squeeze_batch_dimension=not self._vectorized,
        )
        return _vector_actions(self._action_space, actions) if self._vectorized else actions

    def _outputs(self, observations: np.ndarray, *others: np.ndarray) -> Tuple[Any, ...]:
        if self._jax:
            return jax.device_put((observations, *others), self.device)  # one transfer for the whole step
        return (observations, *others)

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step the environment.

        :param actions: flat ``(num_envs, size)`` actions (NumPy or JAX array).
        :return: ``(observations, rewards, terminated, truncated, info)``; for a done sub-environment of a vector env, ``observations`` holds the first observation of its next episode (the terminal one is in ``info["final_obs"]``).
        """
        observations, rewards, terminated, truncated, info = self._env.step(self._to_environment_actions(actions))
        if self._vectorized and self._autoreset is not None:
            observations, info = self._autoreset(observations, terminated, truncated, info)
        observations = flat_observations(self._observation_space, observations)
        rewards = np.asarray(rewards, dtype=np.float32).reshape(self.num_envs, -1)
        check_finite(observations, rewards, self._unwrapped)
        # bool and int8 have the same size: a view, not a copy
        terminated = np.asarray(terminated, dtype=np.bool_).view(np.int8).reshape(self.num_envs, -1)
        truncated = np.asarray(truncated, dtype=np.bool_).view(np.int8).reshape(self.num_envs, -1)
        if self._vectorized:
            self._observations, self._info = observations, info
        observations, rewards, terminated, truncated = self._outputs(observations, rewards, terminated, truncated)
        return observations, rewards, terminated, truncated, info

    def reset(self) -> Tuple[Any, Any]:
        """Reset the environment: ``(observations, info)``.

        A vector env is reset on the first call only; later calls return the latest observations, since the
        sub-environments reset themselves when they finish.
        """
        if self._vectorized:
            if self._reset_once:
                observations, self._info = self._env.reset()
                self._observations = flat_observations(self._observation_space, observations)
                check_finite(self._observations, None, self._unwrapped)
                self._reset_once = False
            return self._outputs(self._observations)[0], self._info
        observations, info = self._env.reset()
        observations = flat_observations(self._observation_space, observations)
        check_finite(observations, None, self._unwrapped)
        return self._outputs(observations)[0], info

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment (every sub-environment of a vector env)."""
        if self._vectorized:
            return self._env.call("render", *args, **kwargs)
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()


__all__ = ["GymnasiumWrapper"]
