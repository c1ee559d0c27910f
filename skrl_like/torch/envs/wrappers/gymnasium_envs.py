"""``GymnasiumWrapper``: gymnasium single environments and vector environments (sync and async).

Episode boundaries of vector environments
-----------------------------------------
gymnasium >= 1.0 vector envs autoreset in ``NEXT_STEP`` mode by default: the step after a terminal/truncated step
only resets that sub-environment, ignores its action and reports reward 0 with both flags false. An agent that
records every step would learn from that bogus "reset step" (a transition between two episodes). The wrapper never
lets the agent see it:

* ``NEXT_STEP`` and ``DISABLED`` modes: right after a step in which some sub-environments terminated or were
  truncated, the wrapper resets exactly those sub-environments with
  ``env.reset(options={"reset_mask": done})`` (through the backend-neutral
  :class:`skrl_like.core.vector_autoreset.SameStepAutoreset`, shared with the JAX backend; supported by
  gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv``), so the next ``step`` is a real step of the new episode
  for every sub-environment.
* ``SAME_STEP`` mode (and gymnasium < 1.0): the env already resets inside the terminal step; nothing to do.

In every mode the semantics seen through the wrapper are therefore those of same-step autoreset (and of skrl
1.4.3 with gymnasium 0.29): for a sub-environment that is done at this step, ``rewards``/``terminated``/
``truncated`` belong to the terminal transition, while ``next_states`` holds the **first observation of its new
episode**; the terminal observation is in ``info["final_obs"]`` (an object array with one entry per
sub-environment, ``None`` where ``info["_final_obs"]`` is false), as gymnasium reports it in same-step mode.
Vector environments that autoreset on the next step but cannot reset single sub-environments (e.g. gymnasium's
own ``CartPoleVectorEnv``, which ``make_vec`` picks when no ``vectorization_mode`` is given, or an
``AsyncVectorEnv`` without shared memory) are rejected at construction with the fix in the message. Caveat of
gymnasium 1.4 itself: its *vector* ``RecordEpisodeStatistics`` wrapper zeroes the statistics of every
sub-environment on a partial reset (transitions stay correct); record statistics on the single envs instead
(``make_vec(..., wrappers=[RecordEpisodeStatistics])``) or use ``SAME_STEP``.

Non-finite values
-----------------
Every step checks the float observations and the rewards the env returned for NaN/inf with one NumPy reduction
(before any conversion) and raises a ``ValueError`` naming the env, the step and the sub-environments. Construct
the wrapper with ``check_finite=False`` (or set ``wrapper.check_finite = False``) to skip it, e.g. for envs that
legitimately use ``inf`` as an observation value.
"""

from typing import Any, Optional, Tuple

import gymnasium
import numpy as np
import torch
from gymnasium import spaces

from skrl_like.core.vector_autoreset import SameStepAutoreset
from skrl_like.torch.envs.wrappers.base import Wrapper
from skrl_like.torch.utils.spaces import (
    flatten_tensorized_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)


def _env_name(env: Any) -> str:
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return spec.id
    return type(env).__name__


def _non_finite_rows(value: Any) -> np.ndarray:
    # slow path, only used to word the error: which sub-environments produced NaN/inf
    if isinstance(value, dict):
        return np.unique(np.concatenate([_non_finite_rows(item) for item in value.values()]))
    if isinstance(value, tuple):
        return np.unique(np.concatenate([_non_finite_rows(item) for item in value]))
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return np.zeros(0, dtype=np.int64)
    if array.ndim == 0:
        return np.zeros(0 if np.isfinite(array) else 1, dtype=np.int64)
    return np.nonzero(~np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1))[0]


def _all_finite(space: gymnasium.Space, value: Any) -> bool:
    if isinstance(space, spaces.Dict):
        return all(_all_finite(space[key], value[key]) for key in space.keys())
    if isinstance(space, spaces.Tuple):
        return all(_all_finite(child, item) for child, item in zip(space, value))
    array = np.asarray(value)
    return array.dtype.kind != "f" or bool(np.isfinite(array).all())


class _ArrayEnvWrapper(Wrapper):
    """Shared conversions for envs that exchange NumPy values (gymnasium and gym), single or vectorized.

    Everything that depends only on the spaces is decided once here, so that ``step`` runs the fast path (one
    tensor conversion per output, one NumPy conversion for the actions) for ``Box``/``Discrete`` spaces.
    """

    def _setup(
        self, observation_space: gymnasium.Space, action_space: gymnasium.Space, vectorized: bool, check_finite: bool
    ) -> None:
        self._vectorized = vectorized
        self._observation_space = observation_space
        self._action_space = action_space
        self.check_finite = check_finite
        self._num_envs = int(getattr(self._unwrapped, "num_envs", 1)) if vectorized else 1
        self._step_count = 0
        self._observation: Any = None
        self._info: Any = {}
        self._reset_once = True

        self._observation_is_box = isinstance(observation_space, spaces.Box)
        self._observation_is_float = self._observation_is_box and np.dtype(observation_space.dtype).kind == "f"
        # gymnasium vector envs copy their outputs by default; anything else may hand back a buffer it reuses
        self._copy_observations = not (vectorized and getattr(self._unwrapped, "copy", False) is True)

        if isinstance(action_space, spaces.Discrete):
            self._action_kind = "discrete"
            # a gymnasium >= 1.0 vector env wants (num_envs,), not the (num_envs, 1) the policy produces
            self._action_shape: Tuple[int, ...] = (self._num_envs,)
        elif isinstance(action_space, spaces.Box):
            self._action_kind = "array"
            self._action_shape = (self._num_envs, *action_space.shape) if vectorized else tuple(action_space.shape)
        elif isinstance(action_space, spaces.MultiDiscrete):
            self._action_kind = "array"
            self._action_shape = (self._num_envs, *action_space.shape) if vectorized else tuple(action_space.shape)
        else:
            self._action_kind = "generic"
            self._action_shape = ()
        self._action_dtype = getattr(action_space, "dtype", None)

    @property
    def observation_space(self) -> gymnasium.Space:
        """Observation space of one (sub-)environment."""
        return self._observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """Action space of one (sub-)environment."""
        return self._action_space

    @property
    def num_envs(self) -> int:
        """Number of sub-environments (1 for a non-vectorized env)."""
        return self._num_envs

    def _actions_to_env(self, actions: torch.Tensor) -> Any:
        if self._action_kind == "generic":
            return untensorize_space(
                self._action_space,
                unflatten_tensorized_space(self._action_space, actions),
                squeeze_batch_dimension=not self._vectorized,
            )
        if actions.dtype == torch.bfloat16:  # NumPy has no bfloat16
            actions = actions.float()
        array = actions.detach().cpu().numpy()
        if self._action_kind == "discrete" and not self._vectorized:
            if array.size != 1:
                raise self._action_error(actions)
            return int(array.reshape(-1)[0])
        try:
            array = array.reshape(self._action_shape)
        except ValueError:
            raise self._action_error(actions) from None
        return array.astype(self._action_dtype, copy=False)

    def _action_error(self, actions: torch.Tensor) -> ValueError:
        expected = (
            (self._num_envs, 1) if self._action_kind == "discrete" else (self._num_envs, *self._action_space.shape)
        )
        return ValueError(
            f"{type(self).__name__}: actions of shape {tuple(actions.shape)} do not fit the action space "
            f"{self._action_space} of {_env_name(self._env)}: give a tensor of shape {expected}"
        )

    def _observations_to_tensor(self, observation: Any) -> torch.Tensor:
        if self._observation_is_box:
            tensor = torch.from_numpy(np.asarray(observation))
            return tensor.to(device=self._device, dtype=torch.float32, copy=self._copy_observations).reshape(
                self._num_envs, -1
            )
        tensor = flatten_tensorized_space(tensorize_space(self._observation_space, observation, device=self._device))
        return tensor.reshape(self._num_envs, -1)

    def _check_observations(self, observation: Any, where: str) -> None:
        if self._observation_is_box:
            if not self._observation_is_float or np.isfinite(observation).all():
                return
        elif _all_finite(self._observation_space, observation):
            return
        self._raise_non_finite("observations", observation, where)

    def _check_rewards(self, reward: Any) -> None:
        if not np.isfinite(reward).all():
            self._raise_non_finite("rewards", reward, f"step {self._step_count}")

    def _raise_non_finite(self, what: str, value: Any, where: str) -> None:
        rows = _non_finite_rows(value) if self._vectorized else []
        sub_environments = f" (sub-environments {rows.tolist()})" if len(rows) else ""
        raise ValueError(
            f"{type(self).__name__}: environment {_env_name(self._env)} returned non-finite (NaN/inf) {what} at "
            f"{where}{sub_environments}: fix the environment (e.g. clip its state or end the episode before it "
            f"diverges), or pass check_finite=False to the wrapper to skip this check"
        )

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render (every sub-environment of a vector env, through ``env.call``)."""
        if self._vectorized:
            return self._env.call("render", *args, **kwargs)
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()


class GymnasiumWrapper(_ArrayEnvWrapper):
    """Wrap a gymnasium env or vector env so that it exchanges torch tensors with agents and trainers.

    See the module docstring for what ``next_states`` holds at episode ends of vector envs.

    :param env: a ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: check every step's observations and rewards for NaN/inf and raise a ``ValueError`` that
        names the env and the step (one NumPy reduction per step; set ``False`` to skip it).
    """

    def __init__(self, env: Any, check_finite: bool = True) -> None:
        super().__init__(env)
        vector_classes: Tuple[type, ...] = (gymnasium.vector.VectorEnv,)
        experimental = getattr(getattr(gymnasium, "experimental", None), "vector", None)
        if experimental is not None and hasattr(experimental, "VectorEnv"):
            vector_classes += (experimental.VectorEnv,)
        vectorized = isinstance(env, vector_classes)
        if vectorized:
            observation_space, action_space = env.single_observation_space, env.single_action_space
        else:
            observation_space, action_space = env.observation_space, env.action_space
        self._setup(observation_space, action_space, vectorized, check_finite)
        # the shared (backend-neutral) mechanism that gives every vector env same-step autoreset semantics
        self._autoreset: Optional[SameStepAutoreset] = None
        if vectorized:
            autoreset = SameStepAutoreset(env)
            self._autoreset = autoreset if autoreset.active else None

    def reset(self) -> Tuple[torch.Tensor, Any]:
        """Reset the env; a vector env is reset only on the first call (it resets its sub-environments itself).

        :return: ``(observations (num_envs, size), info)``.
        """
        if self._vectorized:
            if self._reset_once:
                observation, self._info = self._env.reset()
                if self.check_finite:
                    self._check_observations(observation, "reset")
                self._observation = self._observations_to_tensor(observation)
                self._reset_once = False
            return self._observation, self._info
        observation, info = self._env.reset()
        if self.check_finite:
            self._check_observations(observation, "reset")
        return self._observations_to_tensor(observation), info

    def step(self, actions: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        """Step every (sub-)environment.

        :param actions: ``(num_envs, action_size)`` (``(num_envs, 1)`` for ``Discrete``).
        :return: ``(next_states, rewards, terminated, truncated, info)``; for a done sub-environment of a vector env,
            ``next_states`` is the first observation of its next episode (terminal one in ``info["final_obs"]``).
        """
        self._step_count += 1
        observation, reward, terminated, truncated, info = self._env.step(self._actions_to_env(actions))
        if self.check_finite:
            self._check_observations(observation, f"step {self._step_count}")
            self._check_rewards(reward)
        num_envs = self._num_envs

        if self._vectorized:
            if self._autoreset is not None:
                observation, info = self._autoreset(observation, terminated, truncated, info)
                if self.check_finite and "final_obs" in info:
                    self._check_observations(observation, f"the reset after step {self._step_count}")
            next_states = self._observations_to_tensor(observation)
            rewards = torch.from_numpy(np.asarray(reward)).to(device=self._device, dtype=torch.float32)
            terminated = torch.from_numpy(np.asarray(terminated)).to(device=self._device, dtype=torch.bool)
            truncated = torch.from_numpy(np.asarray(truncated)).to(device=self._device, dtype=torch.bool)
            self._observation, self._info = next_states, info
        else:
            next_states = self._observations_to_tensor(observation)
            rewards = torch.tensor(reward, dtype=torch.float32, device=self._device)
            terminated = torch.tensor(terminated, dtype=torch.bool, device=self._device)
            truncated = torch.tensor(truncated, dtype=torch.bool, device=self._device)
        return (
            next_states,
            rewards.view(num_envs, -1),
            terminated.view(num_envs, -1),
            truncated.view(num_envs, -1),
            info,
        )
