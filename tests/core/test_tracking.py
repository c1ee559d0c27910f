"""The neutral episode tracker, run through each backend's real subclass (its tensor hooks are the backend's)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like.core import tracking
from skrl_like.jax.agents import Agent as JaxAgent
from skrl_like.jax.agents.tracking import EpisodeTracker as JaxEpisodeTracker
from skrl_like.torch.agents import Agent as TorchAgent
from skrl_like.torch.agents.tracking import EpisodeTracker as TorchEpisodeTracker

# each backend: (its tracker class, how an env step's arrays reach it)
BACKENDS = {
    "torch": (TorchEpisodeTracker, torch.as_tensor),
    "jax-numpy": (JaxEpisodeTracker, np.asarray),
    "jax-jax": (JaxEpisodeTracker, jnp.asarray),
}


@pytest.fixture(params=list(BACKENDS))
def backend(request):
    return BACKENDS[request.param]


def _reduce(stats):
    return {
        tag: (np.max if tag.endswith("(max)") else np.min if tag.endswith("(min)") else np.mean)(values)
        for tag, values in stats.items()
    }


def test_episode_returns_and_lengths_are_split_at_episode_ends(backend):
    tracker_class, array = backend
    tracker = tracker_class(capacity=3)  # smaller than the run: rows are reduced and reused
    # env 0: episodes [1, 2] (terminated) and [3, 4, 5] (truncated); env 1: one unfinished episode
    rewards = [[1, 10], [2, 10], [3, 10], [4, 10], [5, 10]]
    terminated = [[0, 0], [1, 0], [0, 0], [0, 0], [0, 0]]
    truncated = [[0, 0], [0, 0], [0, 0], [0, 0], [1, 0]]
    for r, te, tr in zip(rewards, terminated, truncated):
        tracker.record(
            array(np.array(r, np.float32)[:, None]),
            array(np.array(te, bool)[:, None]),
            array(np.array(tr, bool)[:, None]),
        )
    stats = tracker.collect()
    assert len(stats["Reward / Total reward (mean)"]) == 2  # one entry per finished episode
    assert len(stats["Reward / Instantaneous reward (mean)"]) == 5  # one entry per step
    reduced = _reduce(stats)
    assert reduced["Reward / Total reward (max)"] == 12
    assert reduced["Reward / Total reward (min)"] == 3
    assert reduced["Reward / Total reward (mean)"] == 7.5
    assert reduced["Episode / Total timesteps (max)"] == 3
    assert reduced["Episode / Total timesteps (min)"] == 2
    assert reduced["Reward / Instantaneous reward (max)"] == 10
    assert reduced["Reward / Instantaneous reward (min)"] == 1
    assert reduced["Reward / Instantaneous reward (mean)"] == pytest.approx(np.mean(rewards))
    assert tracker.collect() == {}  # collected data is forgotten


def test_an_episode_spanning_two_collections_is_counted_whole(backend):
    tracker_class, array = backend
    tracker = tracker_class(capacity=8)
    flags = np.zeros((1, 1), bool)
    tracker.record(array(np.full((1, 1), 2.0, np.float32)), array(flags), array(flags))
    assert not any(tag.startswith("Reward / Total") for tag in tracker.collect())  # no episode has ended yet
    tracker.record(array(np.full((1, 1), 3.0, np.float32)), array(~flags), array(flags))
    stats = tracker.collect()
    assert stats["Reward / Total reward (mean)"] == [5.0]
    assert stats["Episode / Total timesteps (mean)"] == [2]


def test_the_buffers_are_the_backends_own_arrays():
    tracker = TorchEpisodeTracker(capacity=4)
    tracker.record(torch.ones(3, 1), torch.zeros(3, 1, dtype=torch.bool), torch.zeros(3, 1, dtype=torch.bool))
    assert isinstance(tracker._rewards, torch.Tensor) and tracker._rewards.shape == (4, 3, 1)
    assert tracker._dones.dtype == torch.bool
    tracker = JaxEpisodeTracker(capacity=4)
    tracker.record(np.ones((3, 1), np.float32), np.zeros((3, 1), bool), np.zeros((3, 1), bool))
    assert isinstance(tracker._rewards, np.ndarray) and tracker._rewards.shape == (4, 3, 1)
    assert tracker._dones.dtype == bool
    # JAX rewards: JAX rows, written without a transfer either way (the row index stays on the device)
    tracker = JaxEpisodeTracker(capacity=4)
    rewards, flags = jnp.ones((3, 1)), jnp.zeros((3, 1), jnp.int8)
    with jax.transfer_guard("disallow"):
        for _ in range(2):
            tracker.record(rewards, flags, flags)
    assert isinstance(tracker._rewards, jax.Array) and tracker._rewards.shape == (4, 3, 1)
    assert tracker._dones.dtype == jnp.bool_
    np.testing.assert_array_equal(np.asarray(tracker._rewards)[:, :, 0], [[1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0]])


@pytest.mark.parametrize(
    "agent_class, tracker_class", [(TorchAgent, TorchEpisodeTracker), (JaxAgent, JaxEpisodeTracker)]
)
def test_each_backend_agent_builds_its_own_tracker_subclass(agent_class, tracker_class, tmp_path):
    agent = agent_class(models={}, cfg={"experiment": {"directory": str(tmp_path), "write_interval": 5}})
    agent.init(trainer_cfg={"timesteps": 100})
    assert type(agent._tracker) is tracker_class
    assert agent._tracker.capacity == 5


def test_the_neutral_tracker_leaves_the_tensor_hooks_to_a_backend():
    with pytest.raises(NotImplementedError):
        tracking.EpisodeTracker(capacity=2).record(np.ones((1, 1)), np.zeros((1, 1), bool), np.zeros((1, 1), bool))
