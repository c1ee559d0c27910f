"""``ObservationMask``: a gymnax environment that shows the agent only some entries of its observations, a partially
observed task for the recurrent agents (with ``CompiledTrainer``: the whole run compiled).

``masked_cartpole()`` is gymnax CartPole-v1 without its velocities, observations ``[x, theta]``: the benchmark of
PureJaxRL's recurrent PPO (``benchmarks/compiled_ppo_rnn.py``): the velocities must be inferred from the history.
Needs JAX and gymnax (the ``gymnax`` extra); importing ``skrl_like.envs`` does not import this module.
"""

from typing import Any, Sequence, Tuple

import jax
import numpy as np
from gymnax.environments import environment, spaces


class ObservationMask(environment.Environment):
    """``env`` with observations reduced to the entries ``keep`` (a flat ``Box`` observation space); rewards, episode
    ends, actions and parameters are ``env``'s.

    :param env: a gymnax environment with a flat ``Box`` observation space.
    :param keep: the indices of the observation entries the agent sees.
    """

    def __init__(self, env: environment.Environment, keep: Sequence[int]) -> None:
        super().__init__()
        space = env.observation_space(env.default_params)
        size = space.shape[0] if isinstance(space, spaces.Box) and len(space.shape) == 1 else None
        if size is None or not keep or any(not 0 <= index < size for index in keep):
            shown = f"{type(space).__name__} {getattr(space, 'shape', '')}"
            raise ValueError(
                f"ObservationMask: keep={tuple(keep)!r} must list indices of the entries of a flat Box observation "
                f"space; {type(env).__name__}'s is {shown}: pick indices in [0, {size}) of a flat Box"
            )
        self._env = env
        self.keep = tuple(int(index) for index in keep)

    @property
    def default_params(self) -> Any:
        return self._env.default_params

    @property
    def name(self) -> str:
        return f"{self._env.name}-masked"

    @property
    def num_actions(self) -> int:
        return self._env.num_actions

    def _masked(self, observations: jax.Array) -> jax.Array:
        return observations[..., np.asarray(self.keep)]

    def reset_env(self, key: jax.Array, params: Any) -> Tuple[jax.Array, Any]:
        observations, state = self._env.reset_env(key, params)
        return self._masked(observations), state

    def step_env(self, key: jax.Array, state: Any, action: Any, params: Any) -> tuple:
        observations, state, reward, done, info = self._env.step_env(key, state, action, params)
        return self._masked(observations), state, reward, done, info

    def observation_space(self, params: Any) -> spaces.Box:
        space = self._env.observation_space(params)
        low, high = (
            bound if np.ndim(bound) == 0 else np.asarray(bound)[list(self.keep)] for bound in (space.low, space.high)
        )
        return spaces.Box(low, high, (len(self.keep),), space.dtype)

    def action_space(self, params: Any) -> Any:
        return self._env.action_space(params)


def masked_cartpole() -> Tuple[ObservationMask, Any]:
    """gymnax CartPole-v1 without its velocities (observations ``[x, theta]``) and its default parameters."""
    import gymnax

    env, params = gymnax.make("CartPole-v1")
    return ObservationMask(env, keep=(0, 2)), params
