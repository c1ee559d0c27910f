"""skrl_like.envs.IsaacLabStandInEnv: Isaac Lab's contract (spaces, observation groups, shapes and dtypes, self-resetting
sub-environments, in-place flags), its dynamics and rewards worked out by hand, its seeding, and a step that never
syncs with the host (the counter of tests/host_syncs.py checked here first)."""

import math

import gymnasium
import numpy as np
import pytest
import torch

import skrl_like.envs
from skrl_like.envs.isaaclab_standin import DirectRLEnvStandIn, IsaacLabStandInEnv
from tests.host_syncs import HostSyncs

A = 8  # action size of the default env


def groups(observations):
    policy = observations["policy"]
    return policy[:, :A], policy[:, A : 2 * A], policy[:, 2 * A : 3 * A], policy[:, 3 * A : 4 * A]


def test_the_spaces_are_isaac_labs_single_and_batched_ones():
    env = IsaacLabStandInEnv(num_envs=5, state_size=7)
    box = lambda *shape: gymnasium.spaces.Box(-np.inf, np.inf, shape, np.float32)  # noqa: E731
    assert env.single_observation_space == gymnasium.spaces.Dict({"policy": box(60), "critic": box(7)})
    assert env.single_action_space == box(8)
    assert env.observation_space == gymnasium.spaces.Dict({"policy": box(5, 60), "critic": box(5, 7)})
    assert env.action_space == box(5, 8)
    assert env.state_space == box(5, 7)  # batched, as Isaac Lab's DirectRLEnv sets it
    assert env.num_envs == 5 and env.device == "cpu" and env.unwrapped is env and env.render() is None
    plain = IsaacLabStandInEnv(num_envs=2, observation_size=10, action_size=3)
    assert list(plain.single_observation_space.keys()) == ["policy"] and plain.state_space is None


def test_reset_and_step_return_the_groups_and_num_envs_columns():
    env = IsaacLabStandInEnv(num_envs=4, state_size=37, seed=0)
    observations, extras = env.reset()
    assert set(observations) == {"policy", "critic"} and isinstance(extras, dict)
    assert observations["policy"].shape == (4, 60) and observations["policy"].dtype == torch.float32
    assert observations["critic"].shape == (4, 37)
    observations, rewards, terminated, truncated, extras = env.step(torch.zeros(4, 8))
    assert rewards.shape == terminated.shape == truncated.shape == (4,)
    assert rewards.dtype == torch.float32 and terminated.dtype == truncated.dtype == torch.bool
    assert extras["log"]["distance_to_target"].shape == ()
    # Isaac Lab writes its reset flags in place: the same tensors at every step
    _, _, terminated_again, truncated_again, _ = env.step(torch.zeros(4, 8))
    assert terminated_again is terminated and truncated_again is truncated


def test_observations_rewards_and_motion_by_hand():
    env = IsaacLabStandInEnv(num_envs=3, seed=1)
    observations, _ = env.reset()
    offset, position, target, last_action = groups(observations)
    assert torch.equal(position, torch.zeros(3, A)) and torch.equal(last_action, torch.zeros(3, A))
    assert torch.equal(offset, target) and bool(((target >= -1) & (target <= 1)).all())
    policy = observations["policy"]
    torch.testing.assert_close(policy[:, 32:60], policy[:, :28], rtol=0, atol=0)  # (g - p, p, g, a) repeated to 60

    actions = torch.linspace(-3, 3, 3 * A).reshape(3, A)  # outside [-1, 1]: clipped
    observations, rewards, terminated, truncated, extras = env.step(actions)
    expected_position = 0.2 * actions.clamp(-1, 1)
    offset, position, new_target, last_action = groups(observations)
    torch.testing.assert_close(position, expected_position)
    torch.testing.assert_close(last_action, actions.clamp(-1, 1))
    torch.testing.assert_close(new_target, target)  # no episode ended
    distance = np.linalg.norm(expected_position.numpy() - target.numpy(), axis=-1)
    np.testing.assert_allclose(rewards.numpy(), 1 - distance / math.sqrt(A), rtol=1e-6)
    assert float(extras["log"]["distance_to_target"]) == pytest.approx(distance.mean(), rel=1e-6)
    assert not terminated.any() and not truncated.any()


def test_steering_to_the_target_solves_the_task():
    """The task is learnable by a linear policy: the action (g - p) / step_size, read from the first 8 observations,
    reaches the target and earns the maximum reward 1."""
    env = IsaacLabStandInEnv(num_envs=16, seed=2)
    observations, _ = env.reset()
    for _ in range(10):
        observations, rewards, terminated, _, _ = env.step(observations["policy"][:, :A] / 0.2)
    assert not terminated.any() and rewards.min() > 0.999
    idle = IsaacLabStandInEnv(num_envs=16, seed=2)
    idle.reset()
    assert idle.step(torch.zeros(16, A))[1].mean() < 0.7


def test_finished_sub_environments_reset_themselves_and_only_they():
    env = IsaacLabStandInEnv(num_envs=3, max_episode_length=50, seed=3)
    observations, _ = env.reset()
    _, _, first_targets, _ = groups(observations)
    push = torch.zeros(3, A)
    push[0, 2] = 1.0  # sub-env 0 walks to the bound |p| = 2 in 10 steps
    for step in range(1, 11):
        observations, _, terminated, truncated, _ = env.step(push)
        assert terminated.tolist() == [step == 10, False, False] and not truncated.any()
    _, position, targets, last_action = groups(observations)
    # the new episode's first observation for sub-env 0; the others go on
    assert torch.equal(position[0], torch.zeros(A)) and torch.equal(last_action[0], torch.zeros(A))
    assert not torch.equal(targets[0], first_targets[0])
    assert torch.equal(targets[1:], first_targets[1:]) and env.episode_length_buf.tolist() == [0, 10, 10]


def test_episodes_are_truncated_at_max_episode_length():
    env = IsaacLabStandInEnv(num_envs=2, max_episode_length=3, seed=4)
    env.reset()
    # cloned: the env writes its flags in place
    flags = [[flag.clone() for flag in env.step(torch.zeros(2, A))[2:4]] for _ in range(4)]
    assert [truncated.tolist() for _, truncated in flags] == [[False, False], [False, False], [True, True], [False] * 2]
    assert not any(terminated.any() for terminated, _ in flags)


def test_the_critic_group_adds_the_episode_progress():
    env = IsaacLabStandInEnv(num_envs=2, state_size=34, max_episode_length=4, seed=5)
    env.reset()
    observations, *_ = env.step(torch.zeros(2, A))
    critic = observations["critic"]
    torch.testing.assert_close(critic[:, :32], observations["policy"][:, :32])
    torch.testing.assert_close(critic[:, 32], torch.full((2,), 0.25))  # 1 step of 4
    torch.testing.assert_close(critic[:, 33], critic[:, 0])


def test_seeding():
    targets = lambda env: env.reset()[0]["policy"][:, 2 * A : 3 * A]  # noqa: E731
    assert torch.equal(targets(IsaacLabStandInEnv(num_envs=4, seed=7)), targets(IsaacLabStandInEnv(num_envs=4, seed=7)))
    assert not torch.equal(
        targets(IsaacLabStandInEnv(num_envs=4, seed=7)), targets(IsaacLabStandInEnv(num_envs=4, seed=8))
    )
    torch.manual_seed(7)  # what set_seed does: the env's default seed is torch's initial seed
    assert torch.equal(targets(IsaacLabStandInEnv(num_envs=4)), targets(IsaacLabStandInEnv(num_envs=4, seed=7)))
    env = IsaacLabStandInEnv(num_envs=4, seed=1)
    assert torch.equal(
        env.reset(seed=7)[0]["policy"][:, 2 * A : 3 * A], targets(IsaacLabStandInEnv(num_envs=4, seed=7))
    )


def test_bad_sizes_are_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"observation_size \(4\) must be at least action_size \(8\).*raise"):
        IsaacLabStandInEnv(observation_size=4)
    with pytest.raises(ValueError, match="IsaacLabStandInEnv: num_envs must be an int >= 1, got 0"):
        IsaacLabStandInEnv(num_envs=0)
    with pytest.raises(ValueError, match="state_size must be an int >= 0, got 2.5"):
        IsaacLabStandInEnv(state_size=2.5)


def test_importable_from_skrl_like_envs_and_through_gymnasium_make():
    assert skrl_like.envs.IsaacLabStandInEnv is IsaacLabStandInEnv
    assert skrl_like.envs.DirectRLEnvStandIn is DirectRLEnvStandIn
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchEnv'"):
        skrl_like.envs.NoSuchEnv  # noqa: B018
    env = gymnasium.make("skrl_like.envs:IsaacLabStandIn-v0", num_envs=3, observation_size=12, action_size=2)
    assert isinstance(env.unwrapped, IsaacLabStandInEnv) and env.unwrapped.num_envs == 3
    observations, _ = env.reset()
    assert observations["policy"].shape == (3, 12)


def test_the_host_sync_counter_sees_each_kind_of_sync():
    values = torch.arange(4.0)
    with HostSyncs() as syncs:
        values.sum().item()
        bool(values.any())
        values.nonzero()
        values[values > 1]
        torch.where(values > 1, values, 0.0)  # no sync
    assert len(syncs.calls) == 4, syncs.calls
    meta = torch.empty(3, device="meta")
    with HostSyncs() as syncs, pytest.raises(NotImplementedError):
        meta.to("cpu")  # a device-to-host copy (a meta tensor cannot actually be copied)
    assert syncs.calls == ["aten._to_copy.default"]


@pytest.mark.parametrize("device", ["cpu"] + (["cuda:0"] if torch.cuda.is_available() else []))
def test_a_step_never_syncs_with_the_host(device):
    env = IsaacLabStandInEnv(num_envs=8, state_size=10, max_episode_length=2, device=device, seed=6)
    env.reset()
    actions = torch.ones(8, A, device=device)
    with HostSyncs() as syncs:
        for _ in range(5):  # episodes end at steps 2 and 4: the masked resets run too
            env.step(actions)
    assert syncs.calls == []
