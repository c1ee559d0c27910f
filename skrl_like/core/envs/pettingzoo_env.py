"""The wrapper of PettingZoo parallel-API environments, written once for both backends.

Every value exchanged is a dict keyed by agent name: flat observations ``(num_envs, size)``, rewards
``(num_envs, 1)``, terminated/truncated ``(num_envs, 1)``, infos passed through. PettingZoo itself is not
imported: the wrapper relies only on the parallel API (``reset``, ``step``, ``state``, the per-agent spaces).
A backend supplies only the tensor-specific conversions, as three hooks:

* ``_observation_to_backend(space, observation)``: one agent's observation (or the global state), flat;
* ``_action_to_env(space, action)``: one agent's flat ``(num_envs, size)`` action, as the env takes it;
* ``_columns_to_backend(rewards, terminated, truncated)``: the three per-agent dicts of NumPy ``(num_envs, 1)``
  columns (float32, bool, bool) in the backend's arrays and dtypes.
"""

from collections.abc import Mapping
from typing import Any, Dict, Tuple

import gymnasium
import numpy as np

from skrl_like.core.envs.array_env import _expected_layout, _layout_problem, all_finite, env_name
from skrl_like.core.envs.wrappers import MultiAgentEnvWrapperCore


class PettingZooWrapperCore(MultiAgentEnvWrapperCore):
    """Reset, step and NaN/inf checks of a PettingZoo ``ParallelEnv``; see the module docstring.

    :param env: the parallel environment (``pettingzoo.ParallelEnv`` or a wrapper of one).
    :param check_finite: check every agent's observations and rewards for NaN/inf at each reset and step and raise a
        ``ValueError`` that names the env, the agent and the step (``False`` skips it, e.g. for envs that use
        ``inf`` as an observation value).
    """

    def __init__(self, env: Any, check_finite: bool = True) -> None:
        super().__init__(env)
        self.check_finite = check_finite
        self._step_count = 0

    # -- backend hooks ---------------------------------------------------------------------------------------

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> Any:
        raise NotImplementedError

    def _action_to_env(self, space: gymnasium.Space, action: Any) -> Any:
        raise NotImplementedError

    def _columns_to_backend(
        self, rewards: Dict[str, np.ndarray], terminated: Dict[str, np.ndarray], truncated: Dict[str, np.ndarray]
    ) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
        raise NotImplementedError

    # -- public API --------------------------------------------------------------------------------------------

    @property
    def observation_spaces(self) -> Dict[str, gymnasium.Space]:
        """Observation space of each possible agent."""
        return self._per_agent_spaces("observation")

    @property
    def action_spaces(self) -> Dict[str, gymnasium.Space]:
        """Action space of each possible agent."""
        return self._per_agent_spaces("action")

    def reset(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Reset the environment: ``(observations, infos)`` keyed by agent."""
        outputs = self._env.reset()
        if isinstance(outputs, Mapping):  # older PettingZoo releases return only the observations
            observations, infos = outputs, {uid: {} for uid in self.possible_agents}
        else:
            observations, infos = outputs
        return self._observations(observations, "reset"), infos

    def step(self, actions: Mapping[str, Any]) -> Tuple[Dict[str, Any], ...]:
        """Step with ``{agent: (num_envs, action_size) action}``.

        :return: ``(observations, rewards, terminated, truncated, infos)`` dicts keyed by agent.
        """
        self._step_count += 1
        spaces = self.action_spaces
        env_actions = {uid: self._action_to_env(spaces[uid], action) for uid, action in actions.items()}
        observations, rewards, terminated, truncated, infos = self._env.step(env_actions)
        where = f"step {self._step_count}"
        rewards = self._column(rewards, np.float32)
        if self.check_finite:
            for uid, value in rewards.items():
                if not np.isfinite(value).all():
                    self._raise_non_finite("rewards", uid, where)
        columns = self._columns_to_backend(
            rewards, self._column(terminated, np.bool_), self._column(truncated, np.bool_)
        )
        return (self._observations(observations, where), *columns, infos)

    def state(self) -> Any:
        """The environment's global state, flat ``(num_envs, size)``."""
        space = next(iter(self.state_spaces.values()))
        return self._observation_to_backend(space, self._env.state())

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the environment (skipped, after one warning, if it was made without a render mode)."""
        if self._skip_render():
            return None
        return self._env.render(*args, **kwargs)

    def close(self) -> None:
        """Close the environment."""
        self._env.close()

    # -- conversions and checks --------------------------------------------------------------------------------

    def _per_agent_spaces(self, kind: str) -> Dict[str, gymnasium.Space]:
        # the env's `<kind>_spaces` dict if it has one, else its `<kind>_space(agent)` method, agent by agent
        spaces = getattr(self._unwrapped, f"{kind}_spaces", None)
        if spaces is None:
            space = getattr(self._env, f"{kind}_space")
            spaces = {uid: space(uid) for uid in self.possible_agents}
        return spaces

    def _observations(self, observations: Mapping[str, Any], where: str) -> Dict[str, Any]:
        spaces = self.observation_spaces
        for uid, value in observations.items():
            problem = _layout_problem(_expected_layout(spaces[uid], ()), value, vectorized=False)
            if problem is not None:
                raise ValueError(
                    f"{type(self).__name__}: environment {env_name(self._env)} returned observations for agent "
                    f"'{uid}' {problem} at {where}; its observation space ({spaces[uid]}) says otherwise: make the env "
                    "return what its observation_spaces declare (or declare the spaces it returns)"
                )
        if self.check_finite:
            for uid, value in observations.items():
                if not all_finite(spaces[uid], value):
                    self._raise_non_finite("observations", uid, where)
        return {uid: self._observation_to_backend(spaces[uid], value) for uid, value in observations.items()}

    def _column(self, values: Mapping[str, Any], dtype: type) -> Dict[str, np.ndarray]:
        return {uid: np.asarray(value, dtype=dtype).reshape(self.num_envs, -1) for uid, value in values.items()}

    def _raise_non_finite(self, what: str, agent: str, where: str) -> None:
        raise ValueError(
            f"{type(self).__name__}: environment {env_name(self._env)} returned non-finite (NaN/inf) {what} "
            f"for agent '{agent}' at {where}: fix the environment (e.g. clip its state or end the episode before it "
            "diverges), or pass check_finite=False to wrap_env (or to the wrapper class) to skip this check"
        )
