"""``BraxWrapper`` and ``PlaygroundWrapper``: Brax and MuJoCo Playground environments, batched over ``num_envs``.

Both simulators share one contract: an environment is two pure functions of an explicit ``State``
(``env.reset(key) -> State``, ``env.step(State, action) -> State``, the state carrying ``obs``, ``reward`` and
``done``), with ``env.observation_size`` and ``env.action_size`` (actions in ``[-1, 1]``). The wrapper takes the
environment as ``brax.envs.get_environment(name)`` or ``mujoco_playground.registry.load(name)`` return it, one
unbatched environment, and does what brax's training wrappers do (``vmap``, the episode length, the action repeat
and the autoreset) itself, so that a run keeps the terminal observations.

As :class:`~skrl_like.jax.envs.wrappers.GymnaxWrapper`, it offers the pure :meth:`BraxWrapper.initial_state` and
:meth:`BraxWrapper.transition` (traced by :class:`~skrl_like.jax.trainers.CompiledTrainer`) and the ordinary
:meth:`BraxWrapper.reset` / :meth:`BraxWrapper.step` (one jitted call per step) built on them; the state stays in
JAX arrays on the device.

Episode ends: a sub-environment whose ``done`` is set is terminated; one that reaches ``episode_length`` steps
without it is truncated. Either is reset inside that step: ``next_states`` holds the first observation of its next
episode and ``infos["final_states"]`` the observation it reached. With ``full_reset=False`` a finished
sub-environment restarts from the state it was first reset to (brax's default autoreset: cheaper, the same start
each episode); with ``full_reset=True`` from a fresh ``env.reset`` with a new key.

A Playground environment whose observation is a dict (``observation_size`` a dict) gives its ``"state"`` entry as
the observations and its ``"privileged_state"`` entry as :meth:`BraxWrapper.state` (the critic's states).
"""

from typing import Any, NamedTuple, Optional, Tuple

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.envs.wrappers.gymnax_envs import GymnaxStep, JaxNativeWrapper

# brax's and Playground's own training wrappers batch and autoreset the env: this wrapper does both itself
_BATCHING_WRAPPERS = ("brax.envs.wrappers.training", "mujoco_playground._src.wrapper")


class BraxState(NamedTuple):
    """What a step of the batched environment carries."""

    env_state: Any  # the simulator's State of every sub-environment
    steps: jax.Array  # int32 (num_envs,): agent steps into each running episode
    first_state: Any  # the State each sub-environment restarts from (None with full_reset)
    key: jax.Array


def _sizes(size: Any) -> Tuple[int, ...]:
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(dimension) for dimension in size)


def _check_count(wrapper: str, name: str, value: Any, minimum: int) -> int:
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum):
        raise ValueError(f"{wrapper}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


class BraxWrapper(JaxNativeWrapper):
    """Wrap a Brax environment (or any environment with its ``reset``/``step``/``State`` contract) as ``num_envs``
    sub-environments stepped together (one ``vmap``).

    :param env: the unbatched environment (``brax.envs.get_environment("ant")``), not one wrapped by
        ``brax.envs.training.wrap`` (this wrapper batches and resets it itself).
    :param num_envs: number of sub-environments (``None``: the env's ``num_envs`` attribute, as
        :func:`~skrl_like.envs.load_playground_env` sets it, else 1).
    :param episode_length: env steps after which an episode is truncated (``None``: the env's ``episode_length``
        attribute, else 1000 as brax's trainers; 0: never).
    :param action_repeat: env steps per agent step, the rewards summed (``None``: the env's ``action_repeat``
        attribute, else 1).
    :param full_reset: reset a finished sub-environment with a fresh ``env.reset`` (``True``) or to its first state
        (``False``, brax's default; ``None``: the env's ``full_reset`` attribute, else ``False``).
    :param seed: the seed of the first :meth:`reset` (``None``: the seed of the last
        :func:`skrl_like.utils.set_seed` call, or 0 without one).
    """

    _simulator = "Brax"

    def __init__(
        self,
        env: Any,
        num_envs: Optional[int] = None,
        episode_length: Optional[int] = None,
        action_repeat: Optional[int] = None,
        full_reset: Optional[bool] = None,
        seed: Optional[int] = None,
    ) -> None:
        name = type(self).__name__
        if any(type(env).__module__.startswith(module) for module in _BATCHING_WRAPPERS):
            raise TypeError(
                f"{name} got {type(env).__name__}, a batched training wrapper of {self._simulator}: pass the "
                f"environment before that wrapping (e.g. env.unwrapped); {name} batches, limits and resets it itself"
            )
        for attribute in ("reset", "step", "observation_size", "action_size"):
            if getattr(env, attribute, None) is None:
                raise TypeError(
                    f"{name} wraps environments with brax's Env contract (reset, step, observation_size, action_size),"
                    f" but {type(env).__name__} has no '{attribute}': wrap gymnasium environments with wrap_env(env)"
                )
        self._num_envs = _check_count(
            name, "num_envs", getattr(env, "num_envs", 1) if num_envs is None else num_envs, 1
        )
        episode_length = getattr(env, "episode_length", 1000) if episode_length is None else episode_length
        self._episode_length = _check_count(name, "episode_length", episode_length, 0)
        action_repeat = getattr(env, "action_repeat", 1) if action_repeat is None else action_repeat
        self._action_repeat = _check_count(name, "action_repeat", action_repeat, 1)
        self._full_reset = bool(getattr(env, "full_reset", False) if full_reset is None else full_reset)
        self._seed = seed
        super().__init__(env)
        observation_size = env.observation_size
        self._dict_observations = isinstance(observation_size, dict)
        if self._dict_observations:
            if "state" not in observation_size:
                raise ValueError(
                    f"{name}: the environment's observations are a dict with keys {sorted(observation_size)}, without "
                    "'state' (the agent's observations, as Playground names them): give the env a 'state' entry"
                )
            observation_shape = _sizes(observation_size["state"])
            privileged = observation_size.get("privileged_state")
            self._state_space = None if privileged is None else self._box(_sizes(privileged))
        else:
            observation_shape = _sizes(observation_size)
            self._state_space = None
        self._observation_space = self._box(observation_shape)
        self._action_space = gymnasium.spaces.Box(low=-1.0, high=1.0, shape=(int(env.action_size),), dtype=np.float32)
        self._carry: Optional[BraxState] = None
        self._observations: Any = None
        self._initial_state_fn = jax.jit(self.initial_state)
        self._transition_fn = jax.jit(self.transition)

    @staticmethod
    def _box(shape: Tuple[int, ...]) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=shape, dtype=np.float32)

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
    def state_space(self) -> Optional[gymnasium.Space]:
        """The privileged observations' space (a Playground env's ``"privileged_state"``), or ``None``."""
        return self._state_space

    @property
    def episode_length(self) -> int:
        """Env steps after which an episode is truncated (0: never)."""
        return self._episode_length

    # -- the pure functions (traced by CompiledTrainer) --------------------------------------------------------

    def _flat(self, observations: Any, entry: str = "state") -> jax.Array:
        if self._dict_observations:
            observations = observations[entry]
        return observations.reshape(self._num_envs, -1).astype(jnp.float32)

    def initial_state(self, key: jax.Array) -> Tuple[BraxState, jax.Array]:
        """``(state, observations)``: every sub-environment reset from its own split of ``key`` (pure)."""
        key, reset_key = jax.random.split(key)
        env_state = jax.vmap(self._env.reset)(jax.random.split(reset_key, self._num_envs))
        steps = jnp.zeros(self._num_envs, jnp.int32)
        first_state = None if self._full_reset else env_state
        return BraxState(env_state, steps, first_state, key), self._flat(env_state.obs)

    def transition(self, state: BraxState, actions: jax.Array) -> Tuple[BraxState, GymnaxStep]:
        """One step of every sub-environment with ``actions`` (the agent's ``(num_envs, action_size)``), resetting
        those whose episode ended (pure): ``(state, outputs)``."""
        key, reset_key = jax.random.split(state.key)
        actions = actions.reshape(self._num_envs, *self._action_space.shape).astype(jnp.float32)
        step = jax.vmap(self._env.step)
        env_state = step(state.env_state, actions)
        rewards = env_state.reward
        for _ in range(self._action_repeat - 1):  # as brax's EpisodeWrapper: the rewards summed, the last done
            env_state = step(env_state, actions)
            rewards = rewards + env_state.reward
        steps = state.steps + 1
        terminated = env_state.done.astype(bool)
        if self._episode_length:
            at_limit = steps * self._action_repeat >= self._episode_length
            truncated = jnp.logical_and(jnp.logical_not(terminated), at_limit)
        else:
            truncated = jnp.zeros_like(terminated)
        done = jnp.logical_or(terminated, truncated)
        if self._full_reset:
            restart = jax.vmap(self._env.reset)(jax.random.split(reset_key, self._num_envs))
        else:
            restart = state.first_state

        def where_done(restarted: jax.Array, stepped: jax.Array) -> jax.Array:
            return jnp.where(done.reshape(-1, *([1] * (stepped.ndim - 1))), restarted, stepped)

        next_env_state = jax.tree_util.tree_map(where_done, restart, env_state)
        outputs = GymnaxStep(
            next_states=self._flat(next_env_state.obs),
            rewards=rewards.reshape(self._num_envs, 1).astype(jnp.float32),
            terminated=terminated.reshape(self._num_envs, 1).astype(jnp.int8),
            truncated=truncated.reshape(self._num_envs, 1).astype(jnp.int8),
            final_states=self._flat(env_state.obs),
        )
        return BraxState(next_env_state, jnp.where(done, 0, steps), state.first_state, key), outputs

    def privileged_states(self, state: BraxState) -> Optional[jax.Array]:
        """The running sub-environments' ``"privileged_state"`` observations, flat (``None`` without them)."""
        if self._state_space is None:
            return None
        return self._flat(state.env_state.obs, "privileged_state")

    def state(self) -> Any:
        """The privileged observations of the running sub-environments (``None`` if the env has none)."""
        if self._carry is None or self._state_space is None:
            return None
        return self._to_backend(self.privileged_states(self._carry))

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Batched simulators are not rendered here: nothing is drawn."""
        return None

    def close(self) -> None:
        """Nothing to release: the environment is a pair of pure functions."""


class PlaygroundWrapper(BraxWrapper):
    """Wrap a MuJoCo Playground environment (``mujoco_playground.registry.load(name)``, or
    :func:`skrl_like.envs.load_playground_env`) as ``num_envs`` sub-environments: :class:`BraxWrapper`'s behaviour
    and arguments; a dict observation gives ``"state"`` to the agent and ``"privileged_state"`` to :meth:`state`."""

    _simulator = "MuJoCo Playground"


__all__ = ["BraxWrapper", "BraxState", "PlaygroundWrapper"]
