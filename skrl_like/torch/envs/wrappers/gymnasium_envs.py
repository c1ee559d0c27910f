"""``GymnasiumWrapper``: gymnasium single environments and vector environments (sync and async), torch tensors.

The wrapper is written once for both backends in :mod:`skrl_like.core.envs.array_env` (reset, step, the same-step
autoreset of vector envs, the NaN/inf checks and their errors, the action conversion); this module supplies only
the conversions between NumPy values and torch tensors.

Episode ends of vector envs: for a sub-environment that is done at this step, ``rewards``/``terminated``/
``truncated`` belong to its terminal transition while ``next_states`` holds the **first observation of its new
episode**; the terminal observation is in ``info["final_obs"]`` (an object array with one entry per
sub-environment, ``None`` where ``info["_final_obs"]`` is false), as gymnasium reports it in same-step mode. Vector
envs that autoreset on the next step but cannot reset single sub-environments (gymnasium's own
``CartPoleVectorEnv``, which ``make_vec`` picks when no ``vectorization_mode`` is given, or an ``AsyncVectorEnv``
without shared memory) are rejected at construction with the fix in the message. Caveat of gymnasium 1.4 itself:
its *vector* ``RecordEpisodeStatistics`` wrapper zeroes the statistics of every sub-environment on a partial reset
(transitions stay correct); record statistics on the single envs instead or use ``SAME_STEP``.
"""

from typing import Any, Tuple

import numpy as np
import torch

from skrl_like.core.envs.array_env import GymnasiumWrapperCore
from skrl_like.torch.envs.wrappers.base import Wrapper
from skrl_like.torch.utils.spaces import (
    flatten_tensorized_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)


class _TensorConversions:
    """The torch side of :class:`skrl_like.core.envs.array_env.ArrayEnvWrapperCore` (its four hooks)."""

    def _actions_to_numpy(self, actions: torch.Tensor) -> np.ndarray:
        if actions.dtype == torch.bfloat16:  # NumPy has no bfloat16
            actions = actions.float()
        return actions.detach().cpu().numpy()

    def _composite_actions_to_env(self, actions: torch.Tensor) -> Any:
        return untensorize_space(
            self._action_space,
            unflatten_tensorized_space(self._action_space, actions),
            squeeze_batch_dimension=not self._vectorized,
        )

    def _observations_to_backend(self, observation: Any) -> torch.Tensor:
        if self._observation_is_box:
            tensor = torch.from_numpy(np.asarray(observation))
            return tensor.to(device=self._device, dtype=torch.float32, copy=self._copy_observations).reshape(
                self._num_envs, -1
            )
        tensor = flatten_tensorized_space(tensorize_space(self._observation_space, observation, device=self._device))
        return tensor.reshape(self._num_envs, -1)

    def _step_to_backend(
        self, observation: Any, reward: Any, terminated: Any, truncated: Any
    ) -> Tuple[torch.Tensor, ...]:
        num_envs, device = self._num_envs, self._device
        rewards = torch.from_numpy(np.asarray(reward, dtype=np.float32)).to(device=device)
        terminated = torch.from_numpy(np.asarray(terminated, dtype=np.bool_)).to(device=device)
        truncated = torch.from_numpy(np.asarray(truncated, dtype=np.bool_)).to(device=device)
        return (
            self._observations_to_backend(observation),
            rewards.view(num_envs, -1),
            terminated.view(num_envs, -1),
            truncated.view(num_envs, -1),
        )


class GymnasiumWrapper(_TensorConversions, GymnasiumWrapperCore, Wrapper):
    """Wrap a gymnasium env or vector env so that it exchanges torch tensors with agents and trainers.

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
