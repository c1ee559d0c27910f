"""The neutral off-policy helpers: exploration schedules, target entropy, construction checks."""

import math

import gymnasium
import numpy as np
import pytest

from skrl_like.core.agents.config import check_config
from skrl_like.core.agents.off_policy import (
    check_action_space,
    check_batch_size,
    default_target_entropy,
    epsilon,
    noise_scale,
)


def test_noise_scale_decays_linearly_then_stops():
    exploration = {"initial_scale": 1.0, "final_scale": 0.1, "timesteps": 10}
    assert noise_scale(0, exploration) == 1.0
    assert noise_scale(5, exploration) == pytest.approx(0.55)
    assert noise_scale(10, exploration) == pytest.approx(0.1)
    assert noise_scale(11, exploration) is None  # no noise at all after the decay (skrl)
    assert noise_scale(0, {**exploration, "timesteps": 0}) == 0.1


def test_epsilon_decays_exponentially_toward_the_final_value():
    exploration = {"initial_epsilon": 1.0, "final_epsilon": 0.05, "timesteps": 100}
    assert epsilon(0, exploration) == 1.0
    assert epsilon(100, exploration) == pytest.approx(0.05 + 0.95 * math.exp(-1))
    assert epsilon(10_000, exploration) == pytest.approx(0.05)


def test_default_target_entropy():
    assert default_target_entropy(gymnasium.spaces.Box(-1, 1, (2, 3))) == -6.0
    assert default_target_entropy(gymnasium.spaces.Discrete(4)) == -4.0
    assert default_target_entropy(gymnasium.spaces.MultiDiscrete([2, 2])) == 0.0


def test_action_space_checks_name_the_algorithm_to_use_instead():
    check_action_space("SAC", gymnasium.spaces.Box(-1, 1, (1,)), "Box")
    with pytest.raises(ValueError, match="DQN needs Discrete actions; for continuous .Box. actions use SAC"):
        check_action_space("DQN", gymnasium.spaces.Box(-1, 1, (1,)), "Discrete")
    with pytest.raises(ValueError, match="TD3 needs continuous .Box. actions; for Discrete actions use DQN"):
        check_action_space("TD3", gymnasium.spaces.Discrete(2), "Box")


def test_a_batch_larger_than_the_memory_is_rejected():
    class Memory:
        memory_size, num_envs = 10, 2

    check_batch_size("SAC", 20, Memory())
    with pytest.raises(ValueError, match=r"batch_size'\] = 21 is larger than the memory's 20 rows"):
        check_batch_size("SAC", 21, Memory())


@pytest.mark.parametrize(
    "key, value",
    [("polyak", 1.5), ("policy_delay", 0), ("target_entropy", "auto"), ("smooth_regularization_noise", 0.2)],
)
def test_off_policy_keys_are_checked(key, value):
    with pytest.raises(ValueError, match=f"SAC\\[{key!r}\\] must be"):
        check_config({key: value}, "SAC")


@pytest.mark.parametrize("key, value", [("timesteps", -1), ("initial_epsilon", 1.5), ("noise", np.float32(0.1))])
def test_exploration_keys_are_checked(key, value):
    with pytest.raises(ValueError, match=f"DQN\\['exploration'\\]\\[{key!r}\\] must be"):
        check_config({"exploration": {key: value}}, "DQN")
