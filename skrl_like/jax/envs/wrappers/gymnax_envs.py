"""``GymnaxWrapper``: environments written in JAX (gymnax), batched over ``num_envs`` and stepped by pure functions.

A gymnax environment is two pure functions of an explicit state and a PRNG key (``reset_env``, ``step_env``), so
the same environment runs in both worlds: the ordinary trainers call :meth:`GymnaxWrapper.reset` and
:meth:`GymnaxWrapper.step` (one jitted call per step, the wrapper keeping the state and the key), and
:class:`~skrl_like.jax.trainers.CompiledTrainer` calls the pure :meth:`GymnaxWrapper.initial_state` and
:meth:`GymnaxWrapper.transition` inside its compiled scan. Both go through the same :meth:`transition`, so a run of
either trainer from the same key sees the same episodes.

Episode ends: a sub-environment that is done at a step is reset inside that step; ``next_states`` holds the first
observation of its next episode and ``infos["final_states"]`` the observation it reached (every row: for the others
it equals ``next_states``), as the gymnasium wrapper reports vector envs, so a truncated episode bootstraps from the
state it really reached. gymnax reports one ``done``; the wrapper calls it a truncation when the episode's ``time``
reached ``params.max_steps_in_episode`` (an episode that fails on its last allowed step counts as truncated) and a
termination otherwise.
"""

from typing import Any, NamedTuple, Optional, Tuple

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core.seeding import get_seed
from skrl_like.jax.envs.wrappers.base import Wrapper


class GymnaxState(NamedTuple):
    """What a step of the batched environment carries: the gymnax state of every sub-environment and the key."""

    env_state: Any
    key: jax.Array


class GymnaxStep(NamedTuple):
    """The outputs of one :meth:`GymnaxWrapper.transition`, each ``(num_envs, size)``."""

    next_states: jax.Array  # after the autoreset
    rewards: jax.Array  # float32
    terminated: jax.Array  # int8
    truncated: jax.Array  # int8
    final_states: jax.Array  # the observations reached (before the autoreset)


def _gymnasium_space(space: Any) -> gymnasium.Space:
    """A gymnax space as the gymnasium space the agents and models are built with."""
    kind = type(space).__name__
    if kind == "Discrete":
        return gymnasium.spaces.Discrete(int(space.n))
    if kind == "Box":
        shape = tuple(space.shape)
        low = np.broadcast_to(np.asarray(space.low, dtype=np.float32), shape)
        high = np.broadcast_to(np.asarray(space.high, dtype=np.float32), shape)
        return gymnasium.spaces.Box(low=low, high=high, shape=shape, dtype=np.float32)
    raise ValueError(
        f"GymnaxWrapper supports gymnax Discrete and Box spaces, not {kind}: flatten the environment's space into a "
        "Box (e.g. with a gymnax wrapper) before wrapping it"
    )


class JaxNativeWrapper(Wrapper):
    """The host-facing half of a wrapper whose environment is written in JAX (gymnax, Brax, Playground): ``reset``
    and ``step`` as one jitted call each over the pure ``initial_state``/``transition`` a subclass builds
    (``self._initial_state_fn``, ``self._transition_fn``), and the running ``carry`` a compiled run takes over."""

    def _to_backend(self, arrays: Any) -> Any:
        return arrays if self._jax else jax.device_get(arrays)

    def reset(self) -> Tuple[Any, Any]:
        """Reset every sub-environment on the first call; later calls return the current observations (the
        sub-environments reset themselves inside :meth:`step`). The key is the wrapper's ``seed``.

        :return: ``(observations (num_envs, size), info)``.
        """
        if self._carry is None:
            seed = self._seed if self._seed is not None else get_seed()
            key = jax.device_put(jax.random.PRNGKey(0 if seed is None else seed), self.device)
            self._carry, self._observations = self._initial_state_fn(key)
        return self._to_backend(self._observations), {}

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """Step every sub-environment (one compiled call): ``(next_states, rewards, terminated, truncated, info)``
        with ``info["final_states"]`` the observations reached (see the module docstring)."""
        if self._carry is None:
            self.reset()
        self._carry, outputs = self._transition_fn(self._carry, jnp.asarray(actions))
        self._observations = outputs.next_states
        next_states, rewards, terminated, truncated, final_states = self._to_backend(tuple(outputs))
        return next_states, rewards, terminated, truncated, {"final_states": final_states}

    @property
    def carry(self) -> Tuple[Any, Any]:
        """``(state, observations)`` of the running sub-environments (``(None, None)`` before the first reset)."""
        return self._carry, self._observations

    @carry.setter
    def carry(self, value: Tuple[Any, Any]) -> None:
        self._carry, self._observations = value


class GymnaxWrapper(JaxNativeWrapper):
    """Wrap a gymnax environment as ``num_envs`` sub-environments stepped together (one ``vmap``).

    :param env: a gymnax environment (``env, env_params = gymnax.make("CartPole-v1")``).
    :param num_envs: number of sub-environments, each with its own state and random stream.
    :param env_params: the environment's parameters (``None``: ``env.default_params``).
    :param seed: the seed of the first :meth:`reset` (``None``: the seed of the last
        :func:`skrl_like.utils.set_seed` call, or 0 without one).
    """

    def __init__(self, env: Any, num_envs: int = 1, env_params: Any = None, seed: Optional[int] = None) -> None:
        if not (isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) and num_envs >= 1):
            raise ValueError(f"GymnaxWrapper: num_envs must be an int >= 1, got {num_envs!r}")
        for method in ("reset_env", "step_env", "observation_space", "action_space"):
            if not callable(getattr(env, method, None)):
                raise TypeError(
                    f"GymnaxWrapper wraps gymnax environments, but {type(env).__name__} has no '{method}' method: "
                    "wrap gymnasium/gym environments with wrap_env(env)"
                )
        self._num_envs = int(num_envs)
        self._params = env.default_params if env_params is None else env_params
        self._seed = seed
        super().__init__(env)
        self._observation_space = _gymnasium_space(env.observation_space(self._params))
        self._action_space = _gymnasium_space(env.action_space(self._params))
        self._discrete_actions = isinstance(self._action_space, gymnasium.spaces.Discrete)
        # the time limit, when the environment has one: a done at the limit is a truncation
        self._time_limit = getattr(self._params, "max_steps_in_episode", None)
        self._carry: Optional[GymnaxState] = None
        self._observations: Any = None
        self._initial_state_fn = jax.jit(self.initial_state)
        self._transition_fn = jax.jit(self.transition)

    @property
    def num_envs(self) -> int:
        return self._num_envs

    @property
    def observation_space(self) -> gymnasium.Space:
        return self._observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        return self._action_space

    @property
    def env_params(self) -> Any:
        """The gymnax parameters every sub-environment runs with."""
        return self._params

    # -- the pure functions (traced by CompiledTrainer) --------------------------------------------------------

    def _flat(self, observations: jax.Array) -> jax.Array:
        return observations.reshape(self._num_envs, -1).astype(jnp.float32)

    def initial_state(self, key: jax.Array) -> Tuple[GymnaxState, jax.Array]:
        """``(state, observations)``: every sub-environment reset from its own split of ``key`` (pure)."""
        key, reset_key = jax.random.split(key)
        observations, env_state = jax.vmap(self._env.reset_env, in_axes=(0, None))(
            jax.random.split(reset_key, self._num_envs), self._params
        )
        return GymnaxState(env_state, key), self._flat(observations)

    def transition(self, state: GymnaxState, actions: jax.Array) -> Tuple[GymnaxState, GymnaxStep]:
        """One step of every sub-environment with ``actions`` (the agent's ``(num_envs, size)``), resetting the
        sub-environments that are done (pure): ``(state, outputs)``."""
        key, step_key, reset_key = jax.random.split(state.key, 3)
        if self._discrete_actions:
            actions = actions.reshape(self._num_envs).astype(jnp.int32)
        else:
            actions = actions.reshape(self._num_envs, *self._action_space.shape).astype(jnp.float32)
        observations, env_state, rewards, done, _ = jax.vmap(self._env.step_env, in_axes=(0, 0, 0, None))(
            jax.random.split(step_key, self._num_envs), state.env_state, actions, self._params
        )
        reset_observations, reset_state = jax.vmap(self._env.reset_env, in_axes=(0, None))(
            jax.random.split(reset_key, self._num_envs), self._params
        )
        done = done.astype(bool)

        def where_done(reset: jax.Array, stepped: jax.Array) -> jax.Array:
            return jnp.where(done.reshape(-1, *([1] * (stepped.ndim - 1))), reset, stepped)

        if self._time_limit is not None and hasattr(env_state, "time"):
            truncated = jnp.logical_and(done, env_state.time >= self._time_limit)  # the stepped state's count
        else:
            truncated = jnp.zeros_like(done)
        env_state = jax.tree_util.tree_map(where_done, reset_state, env_state)
        final_states = self._flat(observations)
        outputs = GymnaxStep(
            next_states=where_done(self._flat(reset_observations), final_states),
            rewards=rewards.reshape(self._num_envs, 1).astype(jnp.float32),
            terminated=jnp.logical_and(done, jnp.logical_not(truncated)).reshape(self._num_envs, 1).astype(jnp.int8),
            truncated=truncated.reshape(self._num_envs, 1).astype(jnp.int8),
            final_states=final_states,
        )
        return GymnaxState(env_state, key), outputs

    def state(self) -> Any:
        return None

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """gymnax environments have no renderer here: nothing is drawn."""
        return None

    def close(self) -> None:
        """Nothing to release: the environment is a pair of pure functions."""


__all__ = ["GymnaxWrapper", "GymnaxState", "GymnaxStep"]
