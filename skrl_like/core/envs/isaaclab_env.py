"""The wrappers of Isaac Lab environments (single-agent and ``DirectMARLEnv`` multi-agent), written once for both
backends.

An Isaac Lab environment steps thousands of sub-environments at once on one device and exchanges torch tensors:
``reset()`` returns ``({"policy": observations[, "critic": states]}, extras)`` and ``step(actions)`` returns
``(observations, rewards, terminated, truncated, extras)`` with ``(num_envs,)`` rewards and flags. It resets its
finished sub-environments itself, inside ``step``. As in skrl 1.4.3, the wrapper therefore resets the environment
once (a later ``reset()`` returns the last observations), reads observations from the ``"policy"`` group, returns
rewards/terminated/truncated as ``(num_envs, 1)``, hands actions over in the action space's structure, does nothing
on ``render()`` and works on the environment's own device. The ``"critic"`` group (privileged observations, or the
env's ``state_space``/``state()``) is what :meth:`state` returns, ``None`` when the env has none.

Isaac Lab itself is not imported: the wrappers rely only on that contract. A backend supplies the conversions
between the env's torch tensors and its own arrays, as hooks:

* ``_action_to_env(space, actions)``: a flat ``(num_envs, size)`` action of the backend as torch tensors on the
  env's device, in the structure of ``space``;
* ``_observation_to_backend(space, observation)``: one observation group (tensors in the structure of ``space``)
  as one flat ``(num_envs, size)`` array;
* ``_column_to_backend(values, flag)``: ``(num_envs,)`` rewards (``flag`` false) or terminated/truncated flags as a
  ``(num_envs, 1)`` column;
* ``_no_grad()``: the context the env is stepped in.

None of these may read a value on the host: with thousands of sub-environments on a GPU a host sync costs more than
the step itself.
"""

from collections.abc import Mapping
from typing import Any, Dict, Optional, Tuple

import gymnasium

from skrl_like.core.envs.wrappers import MultiAgentEnvWrapperCore, WrapperCore


class _IsaacLabHooks:
    """The backend hooks both Isaac Lab wrappers use (see the module docstring)."""

    def _action_to_env(self, space: gymnasium.Space, actions: Any) -> Any:
        raise NotImplementedError

    def _observation_to_backend(self, space: gymnasium.Space, observation: Any) -> Any:
        raise NotImplementedError

    def _column_to_backend(self, values: Any, flag: bool) -> Any:
        raise NotImplementedError

    def _no_grad(self) -> Any:
        raise NotImplementedError

    def render(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: Isaac Lab renders in its own viewer (or not at all, headless)."""
        return None

    def close(self) -> None:
        """Close the environment (and its simulator)."""
        self._env.close()


class IsaacLabWrapperCore(_IsaacLabHooks, WrapperCore):
    """Reset and step of a single-agent Isaac Lab environment (``DirectRLEnv``, ``ManagerBasedRLEnv``); see the
    module docstring.

    :param env: the Isaac Lab environment (as ``gymnasium.make`` returns it, or unwrapped).
    """

    # a run checkpoint of an env whose state pickles (the stand-in) resumes without a reset
    _run_state_attributes = ("_reset_once", "_observations", "_states")

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._reset_once = True
        self._observations: Any = None
        self._states: Any = None
        self._info: Any = {}
        self.observation_space  # noqa: B018 (raises now, with the fix, for an env that is not an Isaac Lab env)

    @property
    def observation_space(self) -> gymnasium.Space:
        """The ``"policy"`` group's space of one sub-environment."""
        try:
            return self._unwrapped.single_observation_space["policy"]
        except (AttributeError, KeyError):  # an env without single-env spaces: observation_space holds the groups
            pass
        try:
            return self._unwrapped.observation_space["policy"]
        except (AttributeError, KeyError, TypeError):
            raise ValueError(self._not_isaac_lab("spaces have no 'policy' observation group")) from None

    @property
    def action_space(self) -> gymnasium.Space:
        """The action space of one sub-environment."""
        try:
            return self._unwrapped.single_action_space
        except AttributeError:
            return self._unwrapped.action_space

    @property
    def state_space(self) -> Optional[gymnasium.Space]:
        """The ``"critic"`` group's space of one sub-environment, else the env's ``state_space``, else ``None``."""
        try:
            return self._unwrapped.single_observation_space["critic"]
        except (AttributeError, KeyError):
            return getattr(self._unwrapped, "state_space", None)

    def reset(self) -> Tuple[Any, Any]:
        """Reset the environment the first time; afterwards the last observations (the env resets its finished
        sub-environments itself).

        :return: ``(observations, extras)``.
        """
        if self._reset_once:
            observations, self._info = self._env.reset()
            self._read_groups(observations)
            self._reset_once = False
        return self._observations, self._info

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step every sub-environment with ``actions`` ``(num_envs, action_size)``.

        :return: ``(observations, rewards, terminated, truncated, extras)``; the middle three are ``(num_envs, 1)``.
        """
        actions = self._action_to_env(self.action_space, actions)
        with self._no_grad():
            observations, rewards, terminated, truncated, self._info = self._env.step(actions)
        self._read_groups(observations)
        return (
            self._observations,
            self._column_to_backend(rewards, flag=False),
            self._column_to_backend(terminated, flag=True),
            self._column_to_backend(truncated, flag=True),
            self._info,
        )

    def state(self) -> Any:
        """The privileged observations of the last step: the ``"critic"`` group, else the env's own ``state()``,
        flat ``(num_envs, size)``; ``None`` when the env has neither."""
        if self._states is not None:
            return self._states
        read = getattr(self._unwrapped, "state", None)
        states = read() if callable(read) else None
        if states is None:
            return None
        space = self.state_space
        if hasattr(states, "shape"):  # one tensor: its rows are the sub-environments (the env's space is batched)
            space = gymnasium.spaces.Box(-float("inf"), float("inf"), tuple(states.shape[1:]))
        return self._observation_to_backend(space, states)

    def _read_groups(self, observations: Mapping) -> None:
        if not isinstance(observations, Mapping) or "policy" not in observations:
            raise ValueError(
                self._not_isaac_lab(f"observations ({type(observations).__name__}) have no 'policy' group")
            )
        self._observations = self._observation_to_backend(self.observation_space, observations["policy"])
        states = observations.get("critic")
        if states is not None:
            self._states = self._observation_to_backend(self.state_space, states)

    def _not_isaac_lab(self, what: str) -> str:
        return (
            f"{type(self).__name__}: the environment's ({type(self._unwrapped).__name__}) {what}, so it is not an Isaac "
            "Lab environment: wrap it with wrapper='auto' (or the tag that fits it, e.g. 'gymnasium'), or return the "
            "observations as {'policy': tensor} as Isaac Lab does"
        )


class IsaacLabMultiAgentWrapperCore(_IsaacLabHooks, MultiAgentEnvWrapperCore):
    """Reset and step of a multi-agent Isaac Lab environment (``DirectMARLEnv``): every value is a dict keyed by
    agent name, the global state comes from the env's ``state()``; see the module docstring.

    :param env: the Isaac Lab ``DirectMARLEnv`` (as ``gymnasium.make`` returns it, or unwrapped).
    """

    _run_state_attributes = ("_reset_once", "_observations")

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._reset_once = True
        self._observations: Dict[str, Any] = {}
        self._info: Any = {}

    def reset(self) -> Tuple[Dict[str, Any], Any]:
        """Reset the environment the first time; afterwards the last observations.

        :return: ``(observations, extras)``, observations keyed by agent.
        """
        if self._reset_once:
            observations, self._info = self._env.reset()
            self._observations = self._per_agent_observations(observations)
            self._reset_once = False
        return self._observations, self._info

    def step(self, actions: Mapping[str, Any]) -> Tuple[Dict[str, Any], ...]:
        """Step with ``{agent: (num_envs, action_size) actions}``.

        :return: ``(observations, rewards, terminated, truncated, extras)``, the first four keyed by agent, rewards
            and flags ``(num_envs, 1)``.
        """
        spaces = self.action_spaces
        actions = {uid: self._action_to_env(spaces[uid], value) for uid, value in actions.items()}
        with self._no_grad():
            observations, rewards, terminated, truncated, self._info = self._env.step(actions)
        self._observations = self._per_agent_observations(observations)
        return (
            self._observations,
            {uid: self._column_to_backend(value, flag=False) for uid, value in rewards.items()},
            {uid: self._column_to_backend(value, flag=True) for uid, value in terminated.items()},
            {uid: self._column_to_backend(value, flag=True) for uid, value in truncated.items()},
            self._info,
        )

    def state(self) -> Any:
        """The env's global state (``state()``), flat ``(num_envs, size)``, or ``None`` when it has none."""
        try:
            states = self._env.state()
        except AttributeError:  # gymnasium's OrderEnforcing does not forward state()
            states = self._unwrapped.state()
        if states is None:
            return None
        return self._observation_to_backend(next(iter(self.state_spaces.values())), states)

    def _per_agent_observations(self, observations: Mapping[str, Any]) -> Dict[str, Any]:
        spaces = self.observation_spaces
        return {uid: self._observation_to_backend(spaces[uid], value) for uid, value in observations.items()}
