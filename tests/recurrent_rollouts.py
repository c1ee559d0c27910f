"""What the ``_RNN`` agents' tests of both backends drive their agents with: hand-made rollouts (NumPy arrays) and
velocity-masked Pendulum; and the NumPy checks of their property tests (tests/{torch,jax}/test_recurrent_properties.py)
on what an agent stored and what its update's models read."""

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


def drawn_rollout(setup, steps, size):
    """A property test's rollout for a drawn ``setup`` (tests/strategies.py's ``RecurrentSetup``): observations
    ``(steps + 1, num_envs, size)``, rewards ``(steps, num_envs, 1)`` and its episode ends ``(terminated, truncated)``,
    each ``(steps, num_envs, 1)`` bool."""
    rng = np.random.default_rng(setup.seed)
    observations = rng.normal(size=(steps + 1, setup.num_envs, size)).astype(np.float32)
    rewards = rng.normal(size=(steps, setup.num_envs, 1)).astype(np.float32)
    terminated, truncated = (ends[..., None] for ends in setup.episode_ends(steps))
    return observations, rewards, terminated, truncated


def check_stored_states(stored, setup, ended, first_step):
    """A memory's stored hidden states ``stored`` ``(memory_size, num_envs, 1, hidden)`` (its first ``setup.steps``
    rows are steps ``first_step`` onwards of the episode ends ``ended`` ``(steps, num_envs)``): float32, and zero
    exactly where the step before ended an episode (nothing before the first step: zeros)."""
    assert stored.dtype == np.float32
    assert stored.shape[1:] == (setup.num_envs, 1, setup.hidden)
    zero = (stored[: setup.steps] == 0).reshape(setup.steps, setup.num_envs, -1).all(-1)
    previous = np.concatenate([np.ones((1, setup.num_envs), bool), ended[:-1]])[first_step:]
    np.testing.assert_array_equal(zero, previous[: setup.steps])


def check_sequences(call, setup, observations, ended, stored_states):
    """Each ``sequence_length`` rows of a training-layout call (``{"states", "rnn", "terminated"}``, NumPy) are
    consecutive steps of one environment (found by its observation), with its episode ends, starting from the state
    stored with the first. Returns the ``(step, environment)`` starts."""
    states, length = call["states"], setup.sequence_length
    assert states.shape[0] % length == 0
    starts = []
    for first in range(0, states.shape[0], length):
        (t0, env), *others = np.argwhere((observations == states[first]).all(-1)).tolist()
        assert not others
        np.testing.assert_array_equal(states[first : first + length], observations[t0 : t0 + length, env])
        np.testing.assert_array_equal(call["terminated"][first : first + length, 0], ended[t0 : t0 + length, env])
        for started, stored in zip(call["rnn"], stored_states):
            np.testing.assert_array_equal(started[:, first], stored[t0, env])
        starts.append((t0, env))
    return starts


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
