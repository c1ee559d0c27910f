"""CEM's neutral half: episodes per environment over the window of two rollouts, skrl's discounting, the elite
threshold and mask, episodes crossing the rollout boundary counted whole, the memory check and the messages when no
episode ends."""

import logging

import numpy as np
import pytest
from cem_reference import (
    CROSSING_DONES,
    CROSSING_MASK,
    CROSSING_PREVIOUS_DONES,
    CROSSING_PREVIOUS_REWARDS,
    CROSSING_RETURNS,
    CROSSING_REWARDS,
    CROSSING_THRESHOLD,
    DONES,
    GAMMA,
    HAND_MASK,
    HAND_RETURNS,
    HAND_THRESHOLD,
    REWARDS,
    elite_rows,
)

from skrl_like.core.agents import cem


def test_discounted_return_gives_the_last_reward_weight_one():
    # skrl's weighting [compat]: r0 * g^2 + r1 * g + r2
    assert cem.discounted_return(np.array([1.0, 2.0, 4.0]), 0.5) == pytest.approx(1 * 0.25 + 2 * 0.5 + 4)


def _fresh_window(rewards, dones):
    """The window of a first rollout: nothing before it (zero rewards, an end at every previous row)."""
    return np.concatenate([np.zeros_like(rewards), rewards]), np.concatenate([np.ones_like(dones), dones])


def test_segments_per_env_column_and_the_unfinished_tail_left_out():
    _, dones = _fresh_window(REWARDS, DONES)
    assert cem.episode_segments(dones, 6) == [(0, 6, 8), (0, 8, 11), (1, 6, 9), (1, 9, 10), (1, 10, 12)]
    # an episode that began in the previous rollout counts from its first row there
    assert cem.episode_segments(np.concatenate([CROSSING_PREVIOUS_DONES, CROSSING_DONES]), 4) == [
        (0, 2, 5), (0, 5, 7), (1, 4, 6)
    ]  # fmt: skip


def test_selection_on_the_hand_made_first_rollout():
    selection = cem.select_elites(*_fresh_window(REWARDS, DONES), 6, GAMMA, 0.5)
    np.testing.assert_allclose(selection.returns, HAND_RETURNS)
    assert selection.threshold == pytest.approx(HAND_THRESHOLD)
    np.testing.assert_array_equal(selection.weights[:6], 0)
    np.testing.assert_array_equal(selection.weights[6:], HAND_MASK)
    assert selection.weights.dtype == np.float32


def test_an_episode_crossing_the_rollout_boundary_counts_whole_with_its_full_return():
    windows = cem.EpisodeWindows("CEM", 4, 0.5, 0.5)
    windows.end_rollout(CROSSING_PREVIOUS_REWARDS, CROSSING_PREVIOUS_DONES)
    selection = windows.select(CROSSING_REWARDS, CROSSING_DONES, timestep=7)
    np.testing.assert_allclose(selection.returns, CROSSING_RETURNS)
    assert selection.threshold == pytest.approx(CROSSING_THRESHOLD)
    np.testing.assert_array_equal(selection.weights, CROSSING_MASK)
    # the window moves on: this rollout is the next one's first half
    np.testing.assert_array_equal(windows.previous_rewards, CROSSING_REWARDS)
    np.testing.assert_array_equal(windows.previous_dones, CROSSING_DONES)


def test_an_episode_longer_than_the_window_counts_from_the_window_start():
    dones = np.zeros((8, 1), bool)
    dones[6, 0] = True  # no end in the previous rollout (rows 0-3): the episode began before it
    rewards = np.arange(8, dtype=np.float32)[:, None]
    selection = cem.select_elites(rewards, dones, 4, 0.5, 0.5)
    assert cem.episode_segments(dones, 4) == [(0, 0, 7)]
    assert selection.returns[0] == pytest.approx(sum(k * 0.5 ** (6 - k) for k in range(7)))


@pytest.mark.parametrize("percentile", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("seed", range(5))
def test_selection_matches_a_row_by_row_reference(seed, percentile):
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=(80, 3)).astype(np.float32)
    dones = rng.random((80, 3)) < 0.15
    dones[45, :] = True  # at least one episode ends in the current rollout (rows 40-79) per env
    selection = cem.select_elites(rewards, dones, 40, 0.9, percentile)
    returns, threshold, mask = elite_rows(rewards, dones, 40, 0.9, percentile)
    np.testing.assert_allclose(selection.returns, returns, rtol=1e-6)
    assert selection.threshold == pytest.approx(threshold, rel=1e-6)
    np.testing.assert_array_equal(selection.weights, mask)


def test_no_episode_ending_in_the_current_rollout_gives_none():
    assert cem.select_elites(*_fresh_window(REWARDS, np.zeros((6, 2), bool)), 6, GAMMA, 0.5) is None
    # ends in the previous rollout only
    dones = np.zeros((12, 2), bool)
    dones[3, 1] = True
    assert cem.select_elites(np.ones((12, 2)), dones, 6, GAMMA, 0.5) is None


def test_windows_keep_the_previous_rollout():
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    windows.select(REWARDS, DONES, timestep=5)
    second = windows.select(REWARDS, DONES, timestep=11)
    # env 0's episode from the first rollout's row 5 (reward 5) to the second's row 1 counts whole:
    # 5 * 0.25 + 1 * 0.5 + 2 = 3.75; env 1 ended the first rollout at its last row
    np.testing.assert_allclose(second.returns, [3.75, 3.5, 3.5, 4.0, 1.5])
    assert second.weights.shape == (12, 2)


def test_no_episode_end_in_a_whole_window_raises_naming_rollouts(caplog):
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    with caplog.at_level(logging.WARNING):  # the first rollout: its episodes may still end in the next one
        assert windows.select(REWARDS, np.zeros((6, 2), bool), timestep=5) is None
    assert "nothing was learned" in caplog.text
    with pytest.raises(ValueError, match=r"cfg\['rollouts'\] = 6 .*2 x 6 steps.*memory_size"):
        windows.select(REWARDS, np.zeros((6, 2), bool), timestep=11)


def test_a_later_rollout_without_an_episode_end_warns_and_learns_nothing(caplog):
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    windows.select(REWARDS, DONES, timestep=5)
    with caplog.at_level(logging.WARNING):
        assert windows.select(REWARDS, np.zeros((6, 2), bool), timestep=11) is None
    assert "cfg['rollouts'] = 6" in caplog.text and "nothing was learned" in caplog.text


def test_ends_in_the_previous_rollout_only_warn(caplog):
    windows = cem.EpisodeWindows("CEM", 6, GAMMA, 0.5)
    dones = np.zeros((6, 2), bool)
    dones[2, 0] = True
    windows.end_rollout(REWARDS, dones)  # a rollout before learning_starts: an episode ended in it
    with caplog.at_level(logging.WARNING):
        assert windows.select(REWARDS, np.zeros((6, 2), bool), timestep=11) is None
    assert "no episode" in caplog.text


class _Memory:
    memory_size = 8


def test_memory_must_hold_one_rollout():
    cem.check_memory("CEM", _Memory(), 8)
    cem.check_memory("CEM", None, 8)
    with pytest.raises(ValueError, match=r"memory holds 8 steps.*cfg\['rollouts'\] is 16.*memory_size=cfg"):
        cem.check_memory("CEM", _Memory(), 16)
