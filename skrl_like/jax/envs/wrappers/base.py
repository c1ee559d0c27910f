"""Base classes of the JAX-backend environment wrappers (NumPy or JAX arrays in and out)."""

from typing import Any, Mapping, Optional, Sequence, Tuple

import gymnasium
import numpy as np

from skrl_like import config


def _parse_env_device(unwrapped: Any) -> Any:
    # environments that live on an accelerator announce it; the others run on the host (default JAX device)
    return config.jax.parse_device(getattr(unwrapped, "device", None))


class _EnvironmentAccess:
    """Attribute forwarding shared by the single- and multi-agent bases."""

    def __init__(self, env: Any) -> None:
        self._env = env
        try:
            self._unwrapped = env.unwrapped
        except Exception:  # some third-party envs have no (or a broken) `unwrapped`
            self._unwrapped = env
        self._device = _parse_env_device(self._unwrapped)
        # read once: the array type produced for the lifetime of this wrapper
        self._jax = config.jax.backend == "jax"

    def __getattr__(self, key: str) -> Any:
        # only called when normal lookup fails: forward to the environment, then to the unwrapped one
        if key in ("_env", "_unwrapped"):  # not set yet (e.g. during unpickling)
            raise AttributeError(key)
        if hasattr(self._env, key):
            return getattr(self._env, key)
        if hasattr(self._unwrapped, key):
            return getattr(self._unwrapped, key)
        raise AttributeError(
            f"Wrapped environment ({self._unwrapped.__class__.__name__}) does not have attribute '{key}'"
        )

    @property
    def device(self) -> Any:
        """The JAX device arrays are put on with the ``"jax"`` backend (the environment's own, if it has one)."""
        return self._device

    @property
    def num_envs(self) -> int:
        """Number of parallel environments (1 for a non-vectorized one)."""
        return getattr(self._unwrapped, "num_envs", 1)

    def render(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class Wrapper(_EnvironmentAccess):
    """Base class of single-agent environment wrappers.

    :param env: the environment to wrap. Unknown attributes are looked up on it, then on ``env.unwrapped``, so the
        wrapper can stand in for the environment.

    Subclasses return observations as flat ``(num_envs, size)`` arrays, rewards float32 ``(num_envs, 1)`` and
    terminated/truncated int8 ``(num_envs, 1)``: NumPy arrays with the ``"numpy"`` backend, JAX arrays on
    :attr:`device` with ``"jax"`` (``skrl_like.config.jax.backend`` when the wrapper is created).
    """

    @property
    def num_agents(self) -> int:
        """Number of agents (1 for single-agent environments)."""
        return getattr(self._unwrapped, "num_agents", 1)

    @property
    def state_space(self) -> Any:
        """The environment's state space, ``None`` if it has none."""
        return getattr(self._unwrapped, "state_space", None)

    @property
    def observation_space(self) -> gymnasium.Space:
        """The (single-environment) observation space."""
        return self._unwrapped.observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """The (single-environment) action space."""
        return self._unwrapped.action_space

    def reset(self) -> Tuple[Any, Any]:
        """Reset the environment: ``(observations, info)``."""
        raise NotImplementedError

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step the environment: ``(observations, rewards, terminated, truncated, info)``."""
        raise NotImplementedError

    def state(self) -> Any:
        """The environment's state (privileged information), if it has one."""
        raise NotImplementedError


class MultiAgentEnvWrapper(_EnvironmentAccess):
    """Base class of multi-agent environment wrappers (every value is a dict keyed by agent name).

    :param env: the environment to wrap. Unknown attributes are looked up on it, then on ``env.unwrapped``.
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
        """Number of agents that can ever be in the environment."""
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
        """Names of every agent that can be in the environment."""
        return self._unwrapped.possible_agents

    @property
    def state_spaces(self) -> Mapping[str, gymnasium.Space]:
        """The environment's (single, shared) state space, under every agent's name."""
        space = self._unwrapped.state_space
        return {uid: space for uid in self.possible_agents}

    @property
    def observation_spaces(self) -> Mapping[str, gymnasium.Space]:
        return self._unwrapped.observation_spaces

    @property
    def action_spaces(self) -> Mapping[str, gymnasium.Space]:
        return self._unwrapped.action_spaces

    def state_space(self, agent: str) -> gymnasium.Space:
        return self.state_spaces[agent]

    def observation_space(self, agent: str) -> gymnasium.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        return self.action_spaces[agent]

    def reset(self) -> Tuple[Mapping[str, Any], Mapping[str, Any]]:
        """Reset the environment: ``(observations, infos)`` keyed by agent."""
        raise NotImplementedError

    def step(self, actions: Mapping[str, Any]) -> Tuple[Mapping[str, Any], ...]:
        """Step the environment: five dicts keyed by agent."""
        raise NotImplementedError

    def state(self) -> Any:
        """The environment's global state."""
        raise NotImplementedError


def check_finite(observations: np.ndarray, rewards: Optional[np.ndarray], env: Any) -> None:
    """Raise a clear error when an environment returns NaN or infinite values (checked once per step)."""
    if np.isfinite(observations).all() and (rewards is None or np.isfinite(rewards).all()):
        return
    part = "observations" if not np.isfinite(observations).all() else "rewards"
    raise ValueError(
        f"The environment ({type(env).__name__}) returned NaN or infinite {part}: they would corrupt the "
        "preprocessors and the networks. Fix the environment (or clip/sanitize its outputs with a gymnasium "
        "wrapper such as TransformObservation/TransformReward) before wrapping it"
    )
