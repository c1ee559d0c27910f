import numpy as np
import pytest

from skrl_like.core.tracking import EpisodeTracker


def _numpy_tracker(capacity):
    def allocate(like, rows, boolean):
        return np.zeros((rows, *like.shape), dtype=bool if boolean else np.float32)

    def write_rewards(buffer, row, rewards):
        buffer[row] = rewards
        return buffer

    def write_dones(buffer, row, terminated, truncated):
        np.logical_or(terminated, truncated, out=buffer[row])
        return buffer

    return EpisodeTracker(allocate, write_rewards, write_dones, np.asarray, capacity)


def test_episode_returns_and_lengths_are_split_at_episode_ends():
    tracker = _numpy_tracker(capacity=3)  # smaller than the run: rows are reduced and reused
    # env 0: episodes [1, 2] (terminated) and [3, 4, 5] (truncated); env 1: one unfinished episode
    rewards = [[1, 10], [2, 10], [3, 10], [4, 10], [5, 10]]
    terminated = [[0, 0], [1, 0], [0, 0], [0, 0], [0, 0]]
    truncated = [[0, 0], [0, 0], [0, 0], [0, 0], [1, 0]]
    for r, te, tr in zip(rewards, terminated, truncated):
        tracker.record(np.array(r, np.float32)[:, None], np.array(te, bool)[:, None], np.array(tr, bool)[:, None])
    stats = tracker.collect()
    reduce = {
        tag: (np.max if tag.endswith("(max)") else np.min if tag.endswith("(min)") else np.mean)(v)
        for tag, v in stats.items()
    }
    assert reduce["Reward / Total reward (max)"] == 12
    assert reduce["Reward / Total reward (min)"] == 3
    assert reduce["Episode / Total timesteps (max)"] == 3
    assert reduce["Episode / Total timesteps (min)"] == 2
    assert reduce["Reward / Instantaneous reward (max)"] == 10
    assert reduce["Reward / Instantaneous reward (min)"] == 1
    assert reduce["Reward / Instantaneous reward (mean)"] == pytest.approx(np.mean(rewards))
    assert tracker.collect() == {}  # collected data is forgotten


def test_no_episode_statistics_before_an_episode_ends():
    tracker = _numpy_tracker(capacity=10)
    tracker.record(np.ones((2, 1), np.float32), np.zeros((2, 1), bool), np.zeros((2, 1), bool))
    assert not any(tag.startswith("Reward / Total") for tag in tracker.collect())
