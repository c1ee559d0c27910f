"""What the ``_RNN`` agents' tests of both backends drive their agents with: hand-made rollouts (NumPy arrays) and
velocity-masked Pendulum."""

import gymnasium
import numpy as np


def rollout_data(steps, seed=0, num_envs=2):
    """``(states, actions, rewards, terminated, truncated, last_states)``, each ``(steps, num_envs, 1)`` (the last
    ``(num_envs, 1)``): normal draws, no episode end (a test sets the ones it needs)."""
    rng = np.random.default_rng(seed)
    states = rng.normal(size=(steps, num_envs, 1)).astype(np.float32)
    actions = rng.normal(size=(steps, num_envs, 1)).astype(np.float32)
    rewards = rng.normal(size=(steps, num_envs, 1)).astype(np.float32)
    terminated = np.zeros((steps, num_envs, 1), dtype=bool)
    last_states = rng.normal(size=(num_envs, 1)).astype(np.float32)
    return states, actions, rewards, terminated, terminated.copy(), last_states


class NoVelocity(gymnasium.ObservationWrapper):
    """Pendulum without its angular velocity: observations ``(cos, sin)``."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,))

    def observation(self, observation):
        return observation[:2]


def masked_pendulum(num_envs=2):
    """A sync vector env of velocity-masked Pendulums (not wrapped: each backend wraps it)."""
    return gymnasium.vector.SyncVectorEnv([lambda: NoVelocity(gymnasium.make("Pendulum-v1"))] * num_envs)


def short_masked_pendulum(num_envs=2, episode_steps=10):
    """:func:`masked_pendulum` with episodes of ``episode_steps`` steps (tests that play whole episodes)."""
    env = lambda: NoVelocity(gymnasium.make("Pendulum-v1", max_episode_steps=episode_steps))  # noqa: E731
    return gymnasium.vector.SyncVectorEnv([env] * num_envs)
