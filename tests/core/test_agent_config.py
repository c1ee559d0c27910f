"""The neutral agent half: config rules, the update schedules, the finite-check messages, policy output sizes."""

import gymnasium
import numpy as np
import pytest

from skrl_like.core.agents.checks import check_named_flags, policy_output_size
from skrl_like.core.agents.config import check_config, with_backend_keys
from skrl_like.core.agents.schedule import OffPolicySchedule, RolloutSchedule, mini_batch_slices


@pytest.mark.parametrize(
    "cfg",
    [
        {"rollouts": np.int64(4), "learning_rate": 0, "discount_factor": 1, "clip_predicted_values": 1},
        {"lambda": 0.0, "learning_rate_scheduler": None, "state_preprocessor": False, "grad_norm_clip": 0.0},
        {"experiment": {"write_interval": "auto", "checkpoint_interval": 0, "directory": "runs"}},
    ],
)
def test_values_inside_the_documented_ranges_pass(cfg):
    check_config(cfg, "X cfg")


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("learning_rate", "1e-3", "pass the number 0.001, not the string '1e-3'"),
        ("learning_rate", -1, "must be a number >= 0.0, got -1"),
        ("learning_rate", float("nan"), "must be a number >= 0.0"),
        ("discount_factor", 1.5, "must be a number >= 0.0 and <= 1.0"),
        ("rollouts", 3.5, "must be an int >= 1, got 3.5"),
        ("rollouts", "100", "pass the int 100, not the string '100'"),
        ("rollouts", True, "must be an int >= 1, got True"),
        ("rewards_shaper", 3, "must be None or a callable"),
        ("state_preprocessor_kwargs", None, "must be a dict of keyword arguments"),
    ],
)
def test_each_bad_value_is_named_with_its_fix(key, value, message):
    with pytest.raises(ValueError, match=rf"X cfg\['{key}'\] must .*") as error:
        check_config({key: value}, "X cfg")
    assert message in str(error.value)


def test_experiment_keys_are_checked_too():
    with pytest.raises(ValueError, match=r"X cfg\['experiment'\]\['checkpoint_interval'\] must be 'auto' or an int"):
        check_config({"experiment": {"checkpoint_interval": -1}}, "X cfg")


def test_algorithm_rules_extend_the_common_ones():
    from skrl_like.core.agents.config import count

    with pytest.raises(ValueError, match="'memory_size'"):
        check_config({"memory_size": 0}, "X cfg", {"memory_size": count(1)})


def test_backend_keys_go_before_experiment():
    merged = with_backend_keys({"a": 1, "experiment": {}}, mixed_precision=False)
    assert list(merged) == ["a", "mixed_precision", "experiment"]


def test_the_rollout_schedule_updates_every_rollouts_steps_after_learning_starts():
    schedule = RolloutSchedule(rollouts=4, learning_starts=6)
    due = [timestep for timestep in range(16) if schedule.updates(timestep)]
    assert due == [7, 11, 15]


def test_the_off_policy_schedule_gates_warm_up_and_the_update_interval():
    schedule = OffPolicySchedule(learning_starts=3, random_timesteps=2, update_interval=2)
    assert [schedule.acts_randomly(t) for t in range(4)] == [True, True, False, False]
    assert [schedule.updates(t) for t in range(8)] == [False, False, False, False, True, False, True, False]
    assert [OffPolicySchedule().updates(t) for t in range(3)] == [True, True, True]


@pytest.mark.parametrize("samples, mini_batches, sizes", [(5, 2, [2, 2]), (8, 4, [2, 2, 2, 2]), (1, 1, [1])])
def test_mini_batches_are_equal_contiguous_slices(samples, mini_batches, sizes):
    slices = mini_batch_slices(samples, mini_batches)
    assert [s.stop - s.start for s in slices] == sizes
    assert slices[0].start == 0 and all(a.stop == b.start for a, b in zip(slices, slices[1:]))


def test_the_first_non_finite_quantity_is_named_with_its_source():
    with pytest.raises(
        FloatingPointError, match=r"X update at timestep 7: the rollout's rewards contain NaN/inf \(the environment"
    ):
        check_named_flags("X", 7, ["the rollout's rewards", "the rollout's values"], [False, False])
    with pytest.raises(
        FloatingPointError, match=r"the value loss of mini-batch 0 \(epoch 1\) contain NaN/inf \(computed from finite"
    ):
        check_named_flags("X", 7, ["a", "the value loss of mini-batch 0 (epoch 1)"], [True, np.bool_(False)])
    check_named_flags("X", 7, ["a", "b"], [True, True])


def test_a_non_finite_policy_loss_points_to_the_ratio_and_the_log_std_floor():
    # PPO's exp(log_prob - old_log_prob) overflows float32 beyond 88: lowering the learning rate alone is not the fix
    with pytest.raises(FloatingPointError, match=r"exp\(log_prob - old_log_prob\).*; raise the policy's min_log_std"):
        check_named_flags("PPO", 3, ["the policy loss of mini-batch 1 (epoch 0)"], [False])
    with pytest.raises(FloatingPointError) as value_error:
        check_named_flags("PPO", 3, ["the value loss of mini-batch 1 (epoch 0)"], [False])
    assert "min_log_std" not in str(value_error.value)


def test_policy_output_sizes_follow_the_action_space():
    assert policy_output_size("categorical", gymnasium.spaces.Discrete(3)) == 3
    assert policy_output_size("multicategorical", gymnasium.spaces.MultiDiscrete([2, 5])) == 7
    assert policy_output_size("gaussian", gymnasium.spaces.Box(-1, 1, (2, 3))) == 6
    assert policy_output_size("categorical", gymnasium.spaces.Box(-1, 1, (2,))) is None
