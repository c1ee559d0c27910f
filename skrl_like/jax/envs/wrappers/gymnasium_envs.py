"""``GymnasiumWrapper``: gymnasium single environments and vector environments (sync and async), NumPy/JAX arrays.

The wrapper is written once for both backends in :mod:`skrl_like.core.envs.array_env` (reset, step, the same-step
autoreset of vector envs, the NaN/inf checks and their errors, the action conversion); this module supplies only
the conversions: with the ``"numpy"`` backend the env's NumPy values pass through as views where they already have
the right dtype (a float32 ``Box`` observation costs no copy), with ``"jax"`` the four outputs of a step go to the
device in one transfer.

Episode ends of vector envs: for a sub-environment that is done at this step, ``rewards``/``terminated``/
``truncated`` belong to its terminal transition while ``next_states`` holds the **first observation of its new
episode**; the terminal observation is in ``info["final_obs"]``, as gymnasium reports it in same-step mode.
"""

from typing import Any, Tuple

import jax
import numpy as np

from skrl_like.core.envs.array_env import GymnasiumWrapperCore
from skrl_like.jax.envs.wrappers.base import Wrapper, flat_observations
from skrl_like.jax.utils.spaces import unflatten_tensorized_space, untensorize_space


class _ArrayConversions:
    """The NumPy/JAX side of :class:`skrl_like.core.envs.array_env.ArrayEnvWrapperCore` (its four hooks)."""

    def _actions_to_numpy(self, actions: Any) -> np.ndarray:
        return np.asarray(actions)  # a JAX array is copied to the host; a NumPy one passes through

    def _composite_actions_to_env(self, actions: Any) -> Any:
        return untensorize_space(
            self._action_space,
            unflatten_tensorized_space(self._action_space, np.asarray(actions)),
            squeeze_batch_dimension=not self._vectorized,
        )

    def _flat_observations(self, observation: Any) -> np.ndarray:
        if self._observation_is_box:
            array = np.array(observation, dtype=np.float32, copy=self._copy_observations or None)
        else:  # discrete spaces stay int32; composites are concatenated (float32 if any part is)
            array = flat_observations(self._observation_space, observation)
        return array.reshape(self._num_envs, -1)

    def _observations_to_backend(self, observation: Any) -> Any:
        observations = self._flat_observations(observation)
        return jax.device_put(observations, self.device) if self._jax else observations

    def _step_to_backend(self, observation: Any, reward: Any, terminated: Any, truncated: Any) -> Tuple[Any, ...]:
        num_envs = self._num_envs
        outputs = (
            self._flat_observations(observation),
            np.asarray(reward, dtype=np.float32).reshape(num_envs, -1),
            # bool and int8 have the same size: a view, not a copy
            np.asarray(terminated, dtype=np.bool_).view(np.int8).reshape(num_envs, -1),
            np.asarray(truncated, dtype=np.bool_).view(np.int8).reshape(num_envs, -1),
        )
        return jax.device_put(outputs, self.device) if self._jax else outputs


class GymnasiumWrapper(_ArrayConversions, GymnasiumWrapperCore, Wrapper):
    """Wrap a gymnasium env or vector env so that it exchanges NumPy or JAX arrays with agents and trainers.

    See the module docstring for what ``next_states`` holds at episode ends of vector envs. The first ``reset`` seeds
    the env with the seed of the last :func:`skrl_like.utils.set_seed` call (``seed + i`` for sub-environment ``i``)
    unless it was seeded or reset before wrapping; an env with the OpenAI Gym API (``reset`` returns the observation
    alone, ``step`` 4 values) raises a ``ValueError`` at its first ``reset``/``step`` that says to use
    ``wrapper="gym"``; ``render`` is skipped (one warning) when the env has no render mode; ``close`` terminates the
    workers of an ``AsyncVectorEnv`` interrupted mid-step (Ctrl-C).

    :param env: a ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: check every step's observations and rewards for NaN/inf and raise a ``ValueError`` that
        names the env, the step and the sub-environments (one NumPy reduction per output; ``False`` skips it).
    """


__all__ = ["GymnasiumWrapper"]
