"""ObservationMask: the masked gymnax environment is the full one with some observation entries hidden (the same
states, rewards and episode ends from the same keys), its space cut alike, and bad indices refused."""

import numpy as np
import pytest

gymnax = pytest.importorskip("gymnax")

import jax  # noqa: E402

from skrl_like.envs.masked_gymnax import ObservationMask, masked_cartpole  # noqa: E402


def test_masked_cartpole_shows_position_and_angle_of_the_same_episode():
    masked, params = masked_cartpole()
    full, _ = gymnax.make("CartPole-v1")
    reset_key, step_key = jax.random.split(jax.random.PRNGKey(3))
    full_observation, full_state = full.reset_env(reset_key, params)
    observation, state = masked.reset_env(reset_key, params)
    np.testing.assert_array_equal(observation, np.asarray(full_observation)[[0, 2]])
    for action in (1, 1, 0):
        full_observation, full_state, full_reward, full_done, _ = full.step_env(step_key, full_state, action, params)
        observation, state, reward, done, _ = masked.step_env(step_key, state, action, params)
        np.testing.assert_array_equal(observation, np.asarray(full_observation)[[0, 2]])
        assert float(reward) == float(full_reward) and bool(done) == bool(full_done)
    space, full_space = masked.observation_space(params), full.observation_space(params)
    assert space.shape == (2,)
    np.testing.assert_array_equal(space.high, np.asarray(full_space.high)[[0, 2]])
    assert masked.action_space(params).n == 2


def test_indices_outside_the_observation_are_refused():
    with pytest.raises(ValueError, match=r"keep=\(4,\) must list indices .* pick indices in \[0, 4\)"):
        ObservationMask(gymnax.make("CartPole-v1")[0], keep=(4,))
