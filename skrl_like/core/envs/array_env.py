"""Wrappers of environments that exchange NumPy values (gymnasium and OpenAI Gym, single or vectorized), written
once for both backends.

Everything that depends only on the spaces is decided once, at construction, so that a step of a ``Box`` or
``Discrete`` env runs a fast path: one NumPy conversion of the actions, one NaN/inf reduction per output, one
conversion per output to the backend's arrays. Composite spaces (``Tuple``, ``Dict``) go through the backend's
space utilities. A backend supplies only the tensor-specific conversions, as four hooks:

* ``_actions_to_numpy(actions)``: the policy's ``(num_envs, size)`` actions as a NumPy array;
* ``_composite_actions_to_env(actions)``: actions of a ``Tuple``/``Dict`` action space, as the env takes them;
* ``_observations_to_backend(observation)``: what ``reset`` returns, flat ``(num_envs, size)``;
* ``_step_to_backend(observation, reward, terminated, truncated)``: what ``step`` returns (the backend may convert
  the four outputs in one transfer).

Episode boundaries of vector envs: gymnasium >= 1.0 vector envs autoreset on the *next* step by default, which
would show the agent a bogus transition between two episodes. :class:`GymnasiumWrapperCore` gives every vector env
same-step semantics through :class:`skrl_like.core.envs.vector_autoreset.SameStepAutoreset`: for a sub-environment that
is done at this step, ``rewards``/``terminated``/``truncated`` belong to its terminal transition and
``next_states`` holds the first observation of its next episode (the terminal one is in ``info["final_obs"]``, and
``info["final_states"]`` is ``next_states`` with those rows replaced by the terminal observations, as the agent's
arrays: what an off-policy agent stores).

Seeding: the wrapper's first ``reset`` seeds the env with the seed of the last :func:`skrl_like.utils.set_seed`
call (sub-environment ``i`` of a vector env gets ``seed + i``, as gymnasium does with an int seed), so that
``set_seed(seed)`` alone makes a run reproducible (in a distributed run process ``rank`` starts at
``seed + rank * num_envs``: :func:`skrl_like.utils.get_env_seed`). An env that already has a random generator when
it is wrapped (it was reset or seeded by the user) keeps it (an ``AsyncVectorEnv`` asks its workers). No
``set_seed`` call: nothing is seeded.
"""

from typing import Any, Mapping, NamedTuple, Optional, Tuple

import gymnasium
import numpy as np
from gymnasium import spaces

from skrl_like.core.envs.vector_autoreset import SameStepAutoreset, with_final_observations
from skrl_like.core.envs.wrappers import WrapperCore, _unwrap, env_attribute
from skrl_like.core.seeding import get_env_seed
from skrl_like.core.spaces import convert_gym_space

# the wrapper's own state that a run checkpoint keeps: counters, the first-reset and seeding flags, the last outputs
_WRAPPER_STATE = ("_step_count", "_reset_once", "_seed_pending", "_observation", "_info")


def env_name(env: Any) -> str:
    """How error messages name an env: its registered id (``CartPole-v1``), else the name in its metadata
    (PettingZoo's ``pistonball_v6``), else its class name."""
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return spec.id
    metadata = getattr(env, "metadata", None)
    if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        return metadata["name"]
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


def all_finite(space: gymnasium.Space, value: Any) -> bool:
    """Whether every floating-point part of ``value`` (a sample, or a batch, of ``space``) is finite."""
    if isinstance(space, spaces.Dict):
        return all(all_finite(space[key], value[key]) for key in space.keys())
    if isinstance(space, spaces.Tuple):
        return all(all_finite(child, item) for child, item in zip(space, value))
    array = np.asarray(value)
    return array.dtype.kind != "f" or bool(np.isfinite(array).all())


def _vector_layout(space: gymnasium.Space, actions: Any) -> Any:
    """Composite actions in the layout a gymnasium >= 1.0 vector env splits: ``Discrete`` parts as ``(num_envs,)``
    (as ``(num_envs, 1)`` each sub-environment would get a one-element array, which its space rejects)."""
    if isinstance(space, spaces.Discrete):
        return np.asarray(actions).reshape(-1)
    if isinstance(space, spaces.Tuple):
        return tuple(_vector_layout(child, value) for child, value in zip(space, actions))
    if isinstance(space, spaces.Dict):
        return {key: _vector_layout(space[key], value) for key, value in actions.items()}
    return actions


def _has_random_generator(env: Any) -> bool:
    """Whether a gymnasium (or gym >= 0.22) env already made its random generator (seeded, or reset before)."""
    base = _unwrap(env)
    return getattr(base, "_np_random_seed", None) is not None or getattr(base, "_np_random", None) is not None


def _waiting_on_workers(env: Any) -> bool:
    """Whether an async vector env (gymnasium's or gym's) is between ``step_async`` and ``step_wait`` (or another
    pending call): an interrupt (Ctrl-C) that lands in ``step_wait`` leaves it so, with some replies read."""
    state = getattr(_unwrap(env), "_state", None)
    return state is not None and getattr(state, "name", "DEFAULT") != "DEFAULT"


def _describe(outputs: Any) -> str:
    if isinstance(outputs, tuple):
        return f"a tuple of {len(outputs)} values"
    shape = getattr(outputs, "shape", None)
    return f"a {type(outputs).__name__}" + (f" of shape {tuple(shape)}" if shape is not None else "")


def _version_tuple(text: str) -> Tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(character for character in part if character.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


# dtype kinds an observation may have: any number for a Box (the agent gets float32), integers for the discrete spaces
# (a float 2.5 would be truncated silently)
_NUMERIC_KINDS, _INTEGER_KINDS = "biuf", "biu"


class _Leaf(NamedTuple):
    """What one array of an observation must look like: its shape (batch dimensions included) and dtype kinds."""

    shape: Tuple[int, ...]
    kinds: str
    space: gymnasium.Space


def _expected_layout(space: gymnasium.Space, batch: Tuple[int, ...]) -> Any:
    """The layout of an observation of ``space`` with ``batch`` leading dimensions: a :class:`_Leaf`, a tuple or dict
    of layouts for ``Tuple``/``Dict``, ``None`` for a space that is not checked."""
    if isinstance(space, spaces.Box):
        return _Leaf(batch + tuple(space.shape), _NUMERIC_KINDS, space)
    if isinstance(space, spaces.Discrete):
        return _Leaf(batch, _INTEGER_KINDS, space)
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        return _Leaf(batch + tuple(space.shape), _INTEGER_KINDS, space)
    if isinstance(space, spaces.Tuple):
        return tuple(_expected_layout(child, batch) for child in space)
    if isinstance(space, spaces.Dict):
        return {key: _expected_layout(child, batch) for key, child in space.items()}
    return None


def _layout_problem(layout: Any, value: Any, vectorized: bool, part: str = "") -> Optional[str]:
    """How ``value`` differs from ``layout`` (``"of shape (20,) where (4, 5) was expected"``), or ``None``."""
    if layout is None:
        return None
    if isinstance(layout, _Leaf):
        shape = np.shape(value)
        # a single env may add or drop a leading 1 ((1, 5) for Box(5,)): the wrapper reshapes it to (1, size) anyway
        if shape != layout.shape and (vectorized or (1, *shape) != layout.shape and shape != (1, *layout.shape)):
            return f"{part}of shape {shape} where {layout.shape} was expected"
        dtype = getattr(value, "dtype", None)
        dtype = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
        if dtype.kind not in layout.kinds:
            expected = "an integer dtype" if layout.kinds == _INTEGER_KINDS else "a numeric dtype"
            return f"{part}of dtype {dtype} where {expected} ({type(layout.space).__name__}) was expected"
        return None
    if isinstance(layout, dict):
        if not isinstance(value, Mapping):
            return f"{part}as {_describe(value)} where a dict with the keys {sorted(layout)} was expected"
        missing = sorted(set(layout) - set(value))
        if missing:
            return f"{part}without the key(s) {missing} of its Dict space"
        children = [(child, value[key], f"{part}[{key!r}] ") for key, child in layout.items()]
    else:
        if not isinstance(value, (tuple, list)) or len(value) != len(layout):
            return f"{part}as {_describe(value)} where a tuple of {len(layout)} parts was expected"
        children = [(child, item, f"{part}[{index}] ") for index, (child, item) in enumerate(zip(layout, value))]
    for child, item, child_part in children:
        problem = _layout_problem(child, item, vectorized, child_part)
        if problem is not None:
            return problem
    return None


class ArrayEnvWrapperCore(WrapperCore):
    """Reset, step, checks and action conversion of envs that exchange NumPy values; see the module docstring.

    Subclasses call :meth:`_setup` from ``__init__`` once they know the spaces, and may override ``_env_reset`` /
    ``_env_step`` to translate an older API into gymnasium's.
    """

    def _setup(
        self,
        observation_space: gymnasium.Space,
        action_space: gymnasium.Space,
        vectorized: bool,
        check_finite: bool,
        vector_api: Optional[bool] = None,
    ) -> None:
        # vectorized: every output has a leading num_envs dimension and the env resets its sub-environments itself
        # (a vector env, or a batched env that declares num_envs); vector_api: the env is a gymnasium/gym VectorEnv
        # (render through env.call, seeds its sub-environments, copies its outputs)
        self._vectorized = vectorized
        self._vector_api = vectorized if vector_api is None else vector_api
        self._observation_space = observation_space
        self._action_space = action_space
        self.check_finite = check_finite
        self._num_envs = int(getattr(self._unwrapped, "num_envs", 1)) if vectorized else 1
        self._autoreset: Optional[SameStepAutoreset] = None
        self._step_count = 0
        self._observation: Any = None
        self._info: Any = {}
        self._reset_once = True
        self._seed_pending = True

        self._observation_is_box = isinstance(observation_space, spaces.Box)
        self._observation_is_float = self._observation_is_box and np.dtype(observation_space.dtype).kind == "f"
        # gymnasium vector envs copy their outputs by default; anything else may hand back a buffer it reuses
        self._copy_observations = not (self._vector_api and getattr(self._unwrapped, "copy", False) is True)
        self._observation_layout = _expected_layout(observation_space, (self._num_envs,) if vectorized else ())

        if isinstance(action_space, spaces.Discrete):
            self._action_kind = "discrete"
            # a gymnasium >= 1.0 vector env wants (num_envs,), not the (num_envs, 1) the policy produces
            self._action_shape: Tuple[int, ...] = (self._num_envs,)
        elif isinstance(action_space, (spaces.Box, spaces.MultiDiscrete)):
            self._action_kind = "array"
            self._action_shape = (self._num_envs, *action_space.shape) if vectorized else tuple(action_space.shape)
        else:
            self._action_kind = "composite"
            self._action_shape = ()
        self._action_dtype = getattr(action_space, "dtype", None)

    # -- backend hooks ---------------------------------------------------------------------------------------

    def _actions_to_numpy(self, actions: Any) -> np.ndarray:
        raise NotImplementedError

    def _composite_actions_to_env(self, actions: Any) -> Any:
        raise NotImplementedError

    def _observations_to_backend(self, observation: Any) -> Any:
        raise NotImplementedError

    def _step_to_backend(self, observation: Any, reward: Any, terminated: Any, truncated: Any) -> Tuple[Any, ...]:
        raise NotImplementedError

    # -- the env's own API (overridden to translate older APIs) ---------------------------------------------

    def _env_reset(self, seed: Optional[int]) -> Tuple[Any, Any]:
        return self._env.reset() if seed is None else self._env.reset(seed=seed)

    def _env_step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        return self._env.step(actions)

    # -- public API --------------------------------------------------------------------------------------------

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

    def reset(self) -> Tuple[Any, Any]:
        """Reset the env; a vector env is reset only on the first call (it resets its sub-environments itself).

        The first call seeds the env with the seed of the last :func:`skrl_like.utils.set_seed` call (``seed + i``
        for sub-environment ``i``), unless the env was seeded or reset before it was wrapped.

        :return: ``(observations (num_envs, size), info)``.
        """
        if self._vectorized and not self._reset_once:
            return self._observation, self._info
        seed, self._seed_pending = (self._initial_seed() if self._seed_pending else None), False
        observation, info = self._env_reset(seed)
        self._check_observation_layout(observation, "reset")
        if self.check_finite:
            self._check_observations(observation, "reset")
        observations = self._observations_to_backend(observation)
        if self._vectorized:
            self._observation, self._info, self._reset_once = observations, info, False
        return observations, info

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step every (sub-)environment.

        :param actions: ``(num_envs, action_size)`` (``(num_envs, 1)`` for ``Discrete``).
        :return: ``(next_states, rewards, terminated, truncated, info)``, each array ``(num_envs, size)``; for a
            done sub-environment of a vector env, ``next_states`` is the first observation of its next episode
            (the terminal one is in ``info["final_obs"]``).
        """
        self._step_count += 1
        observation, reward, terminated, truncated, info = self._env_step(self._actions_to_env(actions))
        self._check_observation_layout(observation, f"step {self._step_count}")
        if self.check_finite:
            self._check_observations(observation, f"step {self._step_count}")
            self._check_rewards(reward)
        if self._autoreset is not None:
            observation, info = self._autoreset(observation, terminated, truncated, info)
            if self.check_finite and "final_obs" in info:
                self._check_observations(observation, f"the reset after step {self._step_count}")
        next_states, rewards, terminated, truncated = self._step_to_backend(observation, reward, terminated, truncated)
        final = with_final_observations(observation, info) if self._vectorized else None
        if final is not None:  # the terminal observations, as the agent's arrays (read by off-policy agents)
            info["final_states"] = self._observations_to_backend(final)
        if self._vectorized:
            self._observation, self._info = next_states, info
        return next_states, rewards, terminated, truncated, info

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render (every sub-environment of a vector env, through ``env.call``).

        An env made without a render mode (``render_mode`` ``None``) renders nothing: the call is skipped, after
        one warning, so that a trainer without ``headless`` does not pay for it at every step.
        """
        if self._skip_render():
            return None
        if self._vector_api:
            return self._env.call("render", *args, **kwargs)
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment.

        An async vector env interrupted while it waited on its workers (Ctrl-C during ``step``) cannot be closed
        politely (its pending replies are half read): its worker processes are terminated instead.
        """
        if _waiting_on_workers(self._env):
            self._env.close(terminate=True)
        else:
            self._env.close()

    # -- full-state checkpoints (the rest is _EnvironmentAccess.run_state) ------------------------------------

    _run_state_attributes = _WRAPPER_STATE

    def run_state(self) -> Optional[dict]:
        state = super().run_state()
        if state is not None:
            autoreset = vars(self).get("_autoreset")
            state["autoreset"] = None if autoreset is None else autoreset._done.copy()
        return state

    def load_run_state(self, state: dict) -> None:
        super().load_run_state(state)
        autoreset = vars(self).get("_autoreset")
        if autoreset is not None and state.get("autoreset") is not None:
            autoreset._done[:] = state["autoreset"]

    # -- seeding --------------------------------------------------------------------------------------------------

    def _initial_seed(self) -> Optional[int]:
        seed = get_env_seed(self.num_envs)
        if seed is None or self._seeded_before_wrapping():
            return None
        return seed

    def _seeded_before_wrapping(self) -> bool:
        if not self._vector_api:
            return _has_random_generator(self._env)
        sub_environments = getattr(self._unwrapped, "envs", None)  # sync vector envs hold their sub-environments
        if sub_environments is not None:
            return any(_has_random_generator(env) for env in sub_environments)
        try:  # async: ask the workers (gymnasium's wrappers pass `_np_random` through to the base env)
            generators = self._env.get_attr("_np_random")
        except Exception:  # not a gymnasium/gym vector env, or its workers do not answer: treat as unseeded
            return False
        return any(generator is not None for generator in generators)

    # -- conversions and checks --------------------------------------------------------------------------------

    def _actions_to_env(self, actions: Any) -> Any:
        if self._action_kind == "composite":
            actions = self._composite_actions_to_env(actions)
            return _vector_layout(self._action_space, actions) if self._vectorized else actions
        array = self._actions_to_numpy(actions)
        if self._action_kind == "discrete" and not self._vectorized:
            if array.size != 1:
                raise self._action_error(array)
            return int(array.reshape(-1)[0])
        try:
            array = array.reshape(self._action_shape)
        except ValueError:
            raise self._action_error(array) from None
        return array.astype(self._action_dtype, copy=False)

    def _action_error(self, actions: np.ndarray) -> ValueError:
        expected = (
            (self._num_envs, 1) if self._action_kind == "discrete" else (self._num_envs, *self._action_space.shape)
        )
        return ValueError(
            f"{type(self).__name__}: actions of shape {tuple(actions.shape)} do not fit the action space "
            f"{self._action_space} of {env_name(self._env)}: give an array of shape {expected}"
        )

    def _check_observation_layout(self, observation: Any, where: str) -> None:
        """Raise a ``ValueError`` naming the env, the part, the expected and the got shape or dtype when ``observation``
        does not have the layout of the observation space (shapes and dtype kinds only: O(1) for a ``Box``)."""
        problem = _layout_problem(self._observation_layout, observation, self._vectorized)
        if problem is None:
            return
        batch = f"{self._num_envs} sub-environments, each " if self._vectorized else ""
        raise ValueError(
            f"{type(self).__name__}: environment {env_name(self._env)} returned observations {problem} at {where}; "
            f"its observation space ({batch}{self._observation_space}) says otherwise: make the env return what its "
            "observation_space declares (or declare the space it returns)"
        )

    def _check_observations(self, observation: Any, where: str) -> None:
        if self._observation_is_box:
            if not self._observation_is_float or np.isfinite(observation).all():
                return
        elif all_finite(self._observation_space, observation):
            return
        self._raise_non_finite("observations", observation, where)

    def _check_rewards(self, reward: Any) -> None:
        if not np.isfinite(reward).all():
            self._raise_non_finite("rewards", reward, f"step {self._step_count}")

    def _raise_non_finite(self, what: str, value: Any, where: str) -> None:
        rows = _non_finite_rows(value) if self._vectorized else []
        sub_environments = f" (sub-environments {rows.tolist()})" if len(rows) else ""
        raise ValueError(
            f"{type(self).__name__}: environment {env_name(self._env)} returned non-finite (NaN/inf) {what} at "
            f"{where}{sub_environments}: fix the environment (e.g. clip its state or end the episode before it "
            f"diverges), or pass check_finite=False to wrap_env (or to the wrapper class) to skip this check"
        )


def _declared_num_envs(env: Any) -> int:
    """The ``num_envs`` a (non-vector) env declares, as skrl's wrapper reads it; 1 when it declares none."""
    num_envs = getattr(env, "num_envs", 1)
    return int(num_envs) if isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) else 1


def _is_gymnasium_vector_env(env: Any) -> bool:
    vector_classes: Tuple[type, ...] = (gymnasium.vector.VectorEnv,)
    experimental = getattr(getattr(gymnasium, "experimental", None), "vector", None)  # gymnasium 0.28/0.29
    if experimental is not None and hasattr(experimental, "VectorEnv"):
        vector_classes += (experimental.VectorEnv,)
    return isinstance(env, vector_classes)


class GymnasiumWrapperCore(ArrayEnvWrapperCore):
    """A gymnasium env or vector env (sync or async); see the module docstring for episode ends of vector envs.

    A ``gymnasium.Env`` that declares ``num_envs`` > 1 steps that many copies at once (as skrl reads it): its outputs
    have a leading ``num_envs`` dimension, its actions are ``(num_envs, ...)``, its spaces are those of one copy
    (``single_observation_space``/``single_action_space`` where it has them), and it resets its copies itself, as a
    vector env does (``reset`` resets it once).

    :param env: a ``gymnasium.Env`` or ``gymnasium.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: check every step's observations and rewards for NaN/inf and raise a ``ValueError`` that
        names the env, the step and the sub-environments (one NumPy reduction per output; ``False`` skips it, e.g.
        for envs that use ``inf`` as an observation value).
    """

    def __init__(self, env: Any, check_finite: bool = True) -> None:
        super().__init__(env)
        vector_api = _is_gymnasium_vector_env(env)
        batched = not vector_api and _declared_num_envs(self._unwrapped) > 1
        if vector_api or (batched and hasattr(self._unwrapped, "single_observation_space")):
            observation_space = env_attribute(env, "single_observation_space")
            action_space = env_attribute(env, "single_action_space", env.action_space)
        else:
            observation_space, action_space = env.observation_space, env.action_space
        self._setup(observation_space, action_space, vector_api or batched, check_finite, vector_api=vector_api)
        if vector_api:
            autoreset = SameStepAutoreset(env)
            self._autoreset = autoreset if autoreset.active else None
        self._step_api_checked = False

    # the OpenAI Gym API (reset -> observation, step -> 4 values) is told apart at the first reset and step: an
    # observation of two items would otherwise be unpacked silently as (observation, info)

    def _env_reset(self, seed: Optional[int]) -> Tuple[Any, Any]:
        try:
            outputs = self._env.reset() if seed is None else self._env.reset(seed=seed)
        except TypeError as error:
            if seed is None or "seed" not in str(error):
                raise
            raise self._gym_api_error("reset() does not take gymnasium's seed argument") from error
        if not (isinstance(outputs, tuple) and len(outputs) == 2 and isinstance(outputs[1], dict)):
            raise self._gym_api_error(f"reset() returned {_describe(outputs)} instead of (observation, info dict)")
        return outputs

    def _env_step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        outputs = self._env.step(actions)
        if not self._step_api_checked:
            if not (isinstance(outputs, tuple) and len(outputs) == 5):
                raise self._gym_api_error(
                    f"step() returned {_describe(outputs)} instead of (observation, reward, terminated, truncated, "
                    "info)"
                )
            self._step_api_checked = True
        return outputs

    def _gym_api_error(self, what: str) -> ValueError:
        return ValueError(
            f"{type(self).__name__}: environment {env_name(self._env)} follows the OpenAI Gym API, not gymnasium's: "
            f"its {what}. Wrap it with wrap_env(env, wrapper='gym') (GymWrapper, which needs the gym package), or "
            "port it to the gymnasium API"
        )


class GymWrapperCore(ArrayEnvWrapperCore):
    """An OpenAI Gym env or vector env (``gym`` is an optional dependency); spaces become gymnasium spaces.

    For ``gym < 0.25`` the old API is translated: ``step`` returns 4 values and truncation is read from
    ``info["TimeLimit.truncated"]``; ``reset`` returns only the observation. Gym vector envs reset a finished
    sub-environment inside its terminal step, so episode ends look as with :class:`GymnasiumWrapperCore`.

    :param env: a ``gym.Env`` or ``gym.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: as for :class:`GymnasiumWrapperCore`.
    """

    def __init__(self, env: Any, check_finite: bool = True) -> None:
        super().__init__(env)
        import gym  # imported here: gym is optional and unmaintained

        if not hasattr(np, "bool8"):  # old gym releases still refer to np.bool8, which NumPy 2 removed
            np.bool8 = np.bool_
        self._deprecated_api = _version_tuple(gym.__version__) < (0, 25)
        vectorized = isinstance(env, gym.vector.VectorEnv)
        if vectorized:
            observation_space = convert_gym_space(env.single_observation_space)
            action_space = convert_gym_space(env.single_action_space)
        else:
            observation_space = convert_gym_space(env.observation_space)
            action_space = convert_gym_space(env.action_space)
        self._setup(observation_space, action_space, vectorized, check_finite)

    def _env_reset(self, seed: Optional[int]) -> Tuple[Any, Any]:
        if self._deprecated_api:
            if seed is not None and hasattr(self._env, "seed"):  # gym < 0.25 seeds through env.seed
                self._env.seed(seed)
            return self._env.reset(), {}
        return self._env.reset() if seed is None else self._env.reset(seed=seed)

    def _env_step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        if not self._deprecated_api:
            return self._env.step(actions)
        observation, reward, terminated, info = self._env.step(actions)
        if self._vectorized:
            # old vector envs return one info dict per sub-environment
            truncated = np.array([item.get("TimeLimit.truncated", False) for item in info], dtype=np.bool_)
            return observation, reward, np.logical_and(terminated, np.logical_not(truncated)), truncated, {}
        truncated = bool(info.get("TimeLimit.truncated", False))
        return observation, reward, terminated and not truncated, truncated, info
