"""Base classes of the environment wrappers, shared by both backends.

A wrapper gives every environment the same interface: flat observations ``(num_envs, size)``, rewards
``(num_envs, 1)``, terminated/truncated ``(num_envs, 1)``, ``info`` passed through. A backend's ``Wrapper``
and ``MultiAgentEnvWrapper`` add only where their arrays live (``_parse_device``) and what kind they are.
"""

import io
import pickle
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import gymnasium
from gymnasium.utils.ezpickle import EzPickle

from skrl_like import logger


def _unwrap(env: Any) -> Any:
    try:
        return env.unwrapped
    except Exception:  # some envs raise on `unwrapped` (or do not define it): use the env itself
        return env


def env_attribute(env: Any, name: str, default: Any = None) -> Any:
    """``env``'s attribute ``name`` wherever the environment keeps it, else ``default``.

    gymnasium >= 1.0 wrappers no longer forward attributes, and a vector env has none of its sub-envs': this looks
    at the skrl_like wrapper (which forwards to the env it holds and to ``env.unwrapped``), then through gymnasium's
    wrappers (``get_wrapper_attr``), then at the first sub-env of a ``SyncVectorEnv`` (attributes that describe
    the task, as AMP's ``amp_observation_space`` and ``collect_reference_motions``, are the same in every sub-env).
    An ``AsyncVectorEnv``'s sub-envs live in other processes: their attributes are not reached.

    :param env: a skrl_like-wrapped env, or the env itself.
    """
    try:
        return getattr(env, name)
    except AttributeError:
        pass
    inner = vars(env).get("_env", env) if hasattr(env, "__dict__") else env
    candidates = [inner]
    if isinstance(inner, gymnasium.vector.VectorEnv):
        candidates = list(getattr(_unwrap(inner), "envs", None) or [])[:1]
    for candidate in candidates:
        if isinstance(candidate, gymnasium.Env):
            try:
                return candidate.get_wrapper_attr(name)
            except AttributeError:
                pass
    return default


# what draws an env rather than what it is: left out of (and kept as they are by) a restore
_RENDERING_MODULES = ("pygame", "pyglet", "mujoco_viewer")
_RENDERING_ATTRIBUTES = frozenset({"screen", "viewer", "window", "clock", "renderer", "mujoco_renderer", "game_font"})


def _new_instance(cls: type) -> Any:
    return cls.__new__(cls)


def _set_attributes(obj: Any, state: dict) -> None:
    obj.__dict__.update(state)


class _StatePickler(pickle.Pickler):
    """Pickles ``EzPickle`` objects (MuJoCo and PettingZoo envs, ...) by their attributes: ``EzPickle`` pickles the
    constructor's arguments, so an unpickled env would be a fresh one, not the one that was stepped."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, EzPickle) and hasattr(obj, "__dict__"):
            return _new_instance, (type(obj),), dict(vars(obj)), None, None, _set_attributes
        return NotImplemented


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    _StatePickler(buffer, protocol=4).dump(obj)
    return buffer.getvalue()


def _object_state(obj: Any, unsaved: list, path: str, depth: int = 0) -> dict:
    """``obj``'s attributes pickled one by one (``{"pickled": {name: bytes}, "nested": {name: state}}``); an attribute
    that does not pickle is descended into (objects, lists of them), a function is left out, anything else is named
    in ``unsaved``."""
    try:  # whole, when it can: references between its parts stay shared
        return {"whole": _dumps(obj)}
    except Exception:
        pass
    pickled, nested = {}, {}
    for name, value in vars(obj).items():
        try:
            pickled[name] = _dumps(value)
            continue
        except Exception:
            pass
        items = value if isinstance(value, (list, tuple)) else [value]
        if all(callable(item) and not hasattr(item, "step") for item in items):  # constructors, not state
            continue
        if name in _RENDERING_ATTRIBUTES or type(value).__module__.split(".")[0] in _RENDERING_MODULES:
            continue  # a window, font or viewer: how the env draws itself, kept as it is
        if depth < 6 and isinstance(value, (list, tuple)):
            nested[name] = [
                _object_state(item, unsaved, f"{path}.{name}[{i}]", depth + 1) for i, item in enumerate(value)
            ]
        elif depth < 6 and hasattr(value, "__dict__"):
            nested[name] = _object_state(value, unsaved, f"{path}.{name}", depth + 1)
        else:
            unsaved.append(f"{path}.{name}")
    return {"pickled": pickled, "nested": nested}


def _load_object_state(obj: Any, state: dict) -> None:
    if "whole" in state:
        loaded = pickle.loads(state["whole"])
        obj.__dict__.clear()
        obj.__dict__.update(loaded.__dict__)
        return
    for name, data in state["pickled"].items():
        object.__setattr__(obj, name, pickle.loads(data))
    for name, nested in state["nested"].items():
        current = getattr(obj, name)
        if isinstance(nested, list):
            for item, item_state in zip(current, nested):
                _load_object_state(item, item_state)
        else:
            _load_object_state(current, nested)


class _EnvironmentAccess:
    """What every wrapper does with the environment it holds: forward unknown attributes, report the device
    and the number of environments, and declare ``render``/``close``."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._unwrapped = _unwrap(env)
        self._device = self._parse_device(self._unwrapped)
        self._render_warned = False
        self._setup_backend()

    def _parse_device(self, unwrapped: Any) -> Any:
        """The device of the wrapper's outputs (backend hook: the env's own ``device`` if it has one)."""
        raise NotImplementedError

    def _setup_backend(self) -> None:
        """Backend hook run at the end of ``__init__``."""

    def __getattr__(self, key: str) -> Any:
        # only called when normal lookup fails; __dict__ access avoids recursion before __init__ has run
        variables = self.__dict__
        if "_env" not in variables:
            raise AttributeError(key)
        if hasattr(variables["_env"], key):
            return getattr(variables["_env"], key)
        if hasattr(variables["_unwrapped"], key):
            return getattr(variables["_unwrapped"], key)
        raise AttributeError(
            f"Wrapped environment ({type(variables['_unwrapped']).__name__}) does not have attribute '{key}'"
        )

    @property
    def device(self) -> Any:
        """Device where the wrapper's output tensors live (the env's ``device`` if it has one)."""
        return self._device

    @property
    def num_envs(self) -> int:
        """Number of parallel environments (1 for a non-vectorized env)."""
        return getattr(self._unwrapped, "num_envs", 1)

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment."""
        raise NotImplementedError(f"{type(self).__name__} does not implement render()")

    def _skip_render(self) -> bool:
        """Whether ``render`` must not reach the env: it was made without a render mode (``render_mode`` ``None``),
        so rendering would draw nothing at the cost of a call per step. Warns the first time."""
        if getattr(self._env, "render_mode", "") is not None:  # a mode, or an env that predates render_mode
            return False
        if not self._render_warned:
            self._render_warned = True
            logger.warning(
                f"{type(self).__name__}: render() is skipped, the environment has no render mode (render_mode is "
                "None): create it with render_mode='human' (or 'rgb_array') to render, or set the trainer's "
                "'headless' to True so that it does not call render() at every step"
            )
        return True

    # -- full-state checkpoints ---------------------------------------------------------------------------------

    #: the wrapper's own attributes a run checkpoint keeps (counters, last outputs)
    _run_state_attributes: Tuple[str, ...] = ("_step_count",)

    def run_state(self) -> Optional[dict]:
        """The environment's state for a run checkpoint, or ``None`` (with a warning saying why) where it cannot be
        saved.

        The wrapped env is pickled attribute by attribute, descending into the attributes that do not pickle whole
        (a ``SyncVectorEnv`` built by ``gymnasium.make_vec`` holds its sub-envs' constructors as local functions):
        a gymnasium env or a ``SyncVectorEnv`` of Python envs (CartPole, Pendulum, ...), or a PettingZoo env of
        Python objects, keeps its physics state, step counters (``TimeLimit``) and ``np_random`` generators, so a
        resumed run steps on as if never stopped. Functions (constructors) are not state and are left out. An env
        whose state lives elsewhere (an ``AsyncVectorEnv``'s worker processes, a simulator handle) cannot be saved:
        a run resumed from such a checkpoint starts the env from a reset.
        """
        unsaved: list = []
        env = _object_state(self._env, unsaved, "env")
        if unsaved:
            logger.warning(
                f"The state of the environment ({type(self._unwrapped).__name__}) cannot be saved "
                f"({', '.join(unsaved[:4])} cannot be pickled): a run resumed from this checkpoint resets the "
                "environment, so it does not continue exactly"
            )
            return None
        wrapper = {name: vars(self)[name] for name in self._run_state_attributes if name in vars(self)}
        return {"class": type(self._env).__name__, "env": env, "wrapper": wrapper}

    def load_run_state(self, state: dict) -> None:
        """Load :meth:`run_state`'s dict into the wrapped env (the objects the user holds stay the same ones).

        :raises ValueError: the checkpoint holds another kind of environment.
        """
        if state["class"] != type(self._env).__name__:
            raise ValueError(
                f"the checkpoint holds a {state['class']} environment, this trainer's is a {type(self._env).__name__}"
            )
        _load_object_state(self._env, state["env"])
        self._unwrapped = _unwrap(self._env)
        for name, value in state["wrapper"].items():
            setattr(self, name, value)

    def close(self) -> None:
        """Close the environment."""
        raise NotImplementedError(f"{type(self).__name__} does not implement close()")


class WrapperCore(_EnvironmentAccess):
    """Base class of the single-agent wrappers: attribute forwarding, spaces, device.

    Attributes the wrapper does not define are looked up on the wrapped env, then on ``env.unwrapped``, so
    environment-specific members stay reachable through the wrapper.

    :param env: the environment to wrap.
    """

    @property
    def num_agents(self) -> int:
        """Number of agents (1 for single-agent envs)."""
        return getattr(self._unwrapped, "num_agents", 1)

    @property
    def state_space(self) -> Any:
        """The env's state space (privileged information), ``None`` if it has none."""
        return getattr(self._unwrapped, "state_space", None)

    @property
    def observation_space(self) -> gymnasium.Space:
        """Observation space of one environment."""
        return self._unwrapped.observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """Action space of one environment."""
        return self._unwrapped.action_space

    def reset(self) -> Tuple[Any, Any]:
        """Reset the environment: ``(observations, info)``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement reset()")

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step with ``actions``: ``(observations, rewards, terminated, truncated, info)``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def state(self) -> Any:
        """The env's state (privileged information)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement state()")


class MultiAgentEnvWrapperCore(_EnvironmentAccess):
    """Base class of the multi-agent wrappers: per-agent spaces and dict-valued ``reset``/``step``.

    :param env: the multi-agent environment to wrap.
    """

    @property
    def num_agents(self) -> int:
        """Number of agents currently in the environment."""
        try:
            return self._unwrapped.num_agents
        except AttributeError:
            return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """Number of agents that may ever take part."""
        try:
            return self._unwrapped.max_num_agents
        except AttributeError:
            return len(self.possible_agents)

    @property
    def agents(self) -> Sequence[str]:
        """Names of the agents currently in the environment."""
        return self._unwrapped.agents

    @property
    def possible_agents(self) -> Sequence[str]:
        """Names of every agent that may take part."""
        return self._unwrapped.possible_agents

    @property
    def state_spaces(self) -> Mapping[str, gymnasium.Space]:
        """The (shared) state space, once per agent."""
        space = getattr(self._unwrapped, "state_space", None)
        return {uid: space for uid in self.possible_agents}

    @property
    def observation_spaces(self) -> Mapping[str, gymnasium.Space]:
        """Observation space of each agent."""
        return self._unwrapped.observation_spaces

    @property
    def action_spaces(self) -> Mapping[str, gymnasium.Space]:
        """Action space of each agent."""
        return self._unwrapped.action_spaces

    def state_space(self, agent: str) -> gymnasium.Space:
        """State space seen by ``agent``."""
        return self.state_spaces[agent]

    def observation_space(self, agent: str) -> gymnasium.Space:
        """Observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        """Action space of ``agent``."""
        return self.action_spaces[agent]

    def reset(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Reset the environment: ``(observations, infos)`` keyed by agent."""
        raise NotImplementedError(f"{type(self).__name__} does not implement reset()")

    def step(self, actions: Mapping[str, Any]) -> Tuple[Dict[str, Any], ...]:
        """Step with per-agent actions: ``(observations, rewards, terminated, truncated, infos)`` dicts."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def state(self) -> Any:
        """The environment's global state."""
        raise NotImplementedError(f"{type(self).__name__} does not implement state()")
