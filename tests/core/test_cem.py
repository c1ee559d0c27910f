"""CEM's neutral half: whole episodes per environment, skrl's discounting, the elite threshold and mask, episodes
across rollout boundaries, the memory check and the message when a rollout holds no whole episode."""

import logging

import numpy as np
import pytest
from cem_reference import DONES, GAMMA, HAND_MASK, HAND_RETURNS, HAND_THRESHOLD, REWARDS, elite_rows

from skrl_like.core.agents import cem


def test_discounted_return_gives_the_last_reward_weight_one():
    # skrl's weighting [compat]: r0 * g^2 + r1 * g + r2
    assert cem.discounted_return(np.array([1.0, 2.0, 4.0]), 0.5) == pytest.approx(1 * 0.25 + 2 * 0.5 + 4)


def test_segments_per_env_column_and_the_unfinished_tail_left_out():
    fresh = np.array([True, True])
    assert cem.episode_segments(DONES, fresh) == [(0, 0, 2), (0, 2, 5), (1, 0, 3), (1, 3, 4), (1, 4, 6)]
    # env 1 started the rollout inside an episode: its first piece is no whole episode
    assert cem.episode_segments(DONES, np.array([True, False])) == [(0, 0, 2), (0, 2, 5), (1, 3, 4), (1, 4, 6)]


def test_selection_on_the_hand_made_rollout():
    selection = cem.select_elites(REWARDS, DONES, np.array([True, True]), GAMMA, 0.5)
    np.testing.assert_allclose(selection.returns, HAND_RETURNS)
    assert selection.threshold == pytest.approx(HAND_THRESHOLD)
    np.testing.assert_array_equal(selection.weights, HAND_MASK)
    assert selection.weights.dtype == np.float32


def test_selection_interpolates_the_quantile_between_returns():
    # env 1 not fresh: returns [2.5, 3.5, 4, 1.5]; the 0.5 quantile lies halfway between 2.5 and 3.5
    selection = cem.select_elites(REWARDS, DONES, np.array([True, False]), GAMMA, 0.5)
    assert selection.threshold == pytest.approx(3.0)
    expected = np.zeros((6, 2), np.float32)
    expected[2:5, 0] = 1  # return 3.5
    expected[3, 1] = 1  # return 4
    np.testing.assert_array_equal(selection.weights, expected)


@pytest.mark.parametrize("percentile", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("seed", range(5))
def test_selection_matches_a_row_by_row_reference(seed, percentile):
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=(40, 3)).astype(np.float32)
    dones = rng.random((40, 3)) < 0.15
    fresh = rng.random(3) < 0.5
    dones[5, :] = True  # at least one whole episode per env
    selection = cem.select_elites(rewards, dones, fresh, 0.9, percentile)
    returns, threshold, mask = elite_rows(rewards, dones, fresh, 0.9, percentile)
    np.testing.assert_allclose(selection.returns, returns, rtol=1e-6)
    assert selection.threshold == pytest.approx(threshold, rel=1e-6)
    np.testing.assert_array_equal(selection.weights, mask)


def test_no_whole_episode_gives_none():
    assert cem.select_elites(REWARDS, np.zeros((6, 2), bool), np.ones(2, bool), GAMMA, 0.5) is None
    # one end, but in an env that started inside an episode
    dones = np.zeros((6, 2), bool)
    dones[3, 1] = True
    assert cem.select_elites(REWARDS, dones, np.array([True, False]), GAMMA, 0.5) is None


def test_windows_carry_which_envs_start_fresh_into_the_next_rollout():
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    windows.select(REWARDS, DONES, timestep=5)  # env 1's episode ends at the last row, env 0's runs on
    np.testing.assert_array_equal(windows.starts_fresh, [False, True])
    second = windows.select(REWARDS, DONES, timestep=11)
    # env 0's first piece (rows 0-1, the end of the episode begun in the first rollout) is left out
    np.testing.assert_allclose(second.returns, [3.5, 3.5, 4.0, 1.5])
    windows.end_rollout(np.array([True, False]))
    np.testing.assert_array_equal(windows.starts_fresh, [True, False])


def test_episodes_longer_than_the_first_rollout_raise_naming_rollouts():
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    with pytest.raises(ValueError, match=r"cfg\['rollouts'\] = 6 .*longer than it.*memory_size"):
        windows.select(REWARDS, np.zeros((6, 2), bool), timestep=5)


def test_a_later_rollout_without_a_whole_episode_warns_and_learns_nothing(caplog):
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    windows.select(REWARDS, DONES, timestep=5)
    with caplog.at_level(logging.WARNING):
        assert windows.select(REWARDS, np.zeros((6, 2), bool), timestep=11) is None
    assert "cfg['rollouts'] = 6" in caplog.text and "nothing was learned" in caplog.text


def test_a_first_rollout_that_did_not_start_fresh_only_warns(caplog):
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    windows.end_rollout(np.array([False, True]))  # a rollout before learning_starts ended mid-episode in env 0
    dones = np.zeros((6, 2), bool)
    dones[2, 0] = True  # env 0's old episode ends; env 1's fresh one never does
    with caplog.at_level(logging.WARNING):
        assert windows.select(REWARDS, dones, timestep=11) is None
    assert "no episode" in caplog.text


class _Memory:
    memory_size = 8


def test_memory_must_hold_one_rollout():
    cem.check_memory("CEM", _Memory(), 8)
    cem.check_memory("CEM", None, 8)
    with pytest.raises(ValueError, match=r"memory holds 8 steps.*cfg\['rollouts'\] is 16.*memory_size=cfg"):
        cem.check_memory("CEM", _Memory(), 16)
