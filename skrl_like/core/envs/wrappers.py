"""Base classes of the environment wrappers, shared by both backends.

A wrapper gives every environment the same interface: flat observations ``(num_envs, size)``, rewards
``(num_envs, 1)``, terminated/truncated ``(num_envs, 1)``, ``info`` passed through. A backend's ``Wrapper``
and ``MultiAgentEnvWrapper`` add only where their arrays live (``_parse_device``) and what kind they are.
"""

from typing import Any, Dict, Mapping, Sequence, Tuple

import gymnasium

from skrl_like import logger


def _unwrap(env: Any) -> Any:
    try:
        return env.unwrapped
    except Exception:  # some envs raise on `unwrapped` (or do not define it): use the env itself
        return env


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
