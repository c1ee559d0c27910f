"""skrl_like.envs:AmpPendulum-v0: its spaces, its AMP observations, the reference motions against Pendulum's dynamics
and the swing-up law written out here, and the AMP attributes reached through gymnasium's wrappers and a vector env."""

import gymnasium
import numpy as np
import pytest

from skrl_like.core.envs.wrappers import env_attribute
from skrl_like.envs.amp_pendulum import AmpPendulumEnv, reference_motions

ENV_ID = "skrl_like.envs:AmpPendulum-v0"


def test_the_registered_env_is_pendulum_with_a_transition_sized_amp_space():
    env = gymnasium.make(ENV_ID)
    pendulum = gymnasium.make("Pendulum-v1")
    assert env.observation_space == pendulum.observation_space and env.action_space == pendulum.action_space
    assert env.spec.max_episode_steps == 200
    amp_space = env.get_wrapper_attr("amp_observation_space")  # the env is under TimeLimit, OrderEnforcing...
    assert amp_space == gymnasium.spaces.Box(
        np.array([-1, -1, -8, -1, -1, -8], np.float32), np.array([1, 1, 8, 1, 1, 8], np.float32), dtype=np.float32
    )
    # the same dynamics and rewards as Pendulum-v1 from the same seed
    observation, _ = env.reset(seed=4)
    expected, _ = pendulum.reset(seed=4)
    for torque in (2.0, -1.0, 0.5):
        previous = observation
        observation, reward, _, _, info = env.step(np.array([torque], np.float32))
        expected, expected_reward, _, _, _ = pendulum.step(np.array([torque], np.float32))
        np.testing.assert_array_equal(observation, expected)
        assert reward == expected_reward
        assert info["amp_obs"].dtype == np.float32
        np.testing.assert_array_equal(info["amp_obs"], np.concatenate([previous, observation]))


def test_reference_motions_follow_pendulum_dynamics_under_the_swing_up_law():
    motions = reference_motions(episodes=2, seed=7)
    assert motions.shape == (400, 6) and not motions.flags.writeable
    assert reference_motions(episodes=2, seed=7) is motions  # recorded once per process
    before, after = motions[:, :3], motions[:, 3:]
    # within an episode each row starts where the previous one ended; episode 2 starts from reset(seed=8)
    np.testing.assert_array_equal(before[1:200], after[:199])
    start, _ = AmpPendulumEnv().reset(seed=8)
    np.testing.assert_array_equal(before[200], start)
    # the law by hand: pump (15 - E) theta' with E = theta'^2/2 + 15 cos(theta), PD hold when cos(theta) > 0.85
    cos, sin, speed = before.T.astype(np.float64)
    theta = np.arctan2(sin, cos)
    energy = 0.5 * speed**2 + 15 * cos
    torque = np.clip(np.where(cos > 0.85, -(12 * theta + 2.5 * speed), 0.3 * (15 - energy) * speed), -2, 2)
    # Pendulum-v1: theta_dot += (15 sin(theta) + 3 u) * 0.05, clipped to [-8, 8]
    np.testing.assert_allclose(after[:, 2], np.clip(speed + (15 * sin + 3 * torque) * 0.05, -8, 8), atol=1e-5)
    # and it swings up and holds the top
    assert (after[[199, 399], 0] > 0.99).all()


def test_collect_reference_motions_draws_rows_with_numpys_global_rng():
    env = gymnasium.make(ENV_ID, reference_episodes=2, reference_seed=7)
    collect = env.get_wrapper_attr("collect_reference_motions")
    np.random.seed(3)
    drawn = collect(5)
    expected = reference_motions(episodes=2, seed=7)[np.random.RandomState(3).randint(400, size=5)]
    np.testing.assert_array_equal(drawn, expected)
    assert drawn.shape == (5, 6) and drawn.flags.writeable  # a copy: the shared recording stays untouched


@pytest.mark.parametrize("num_envs", [1, 3])
def test_the_amp_attributes_and_observations_come_through_the_wrappers(num_envs):
    torch = pytest.importorskip("torch")
    from skrl_like.torch.envs.wrappers import wrap_env

    if num_envs == 1:
        env = wrap_env(gymnasium.make(ENV_ID, reference_episodes=2), verbose=False)
    else:  # as the command line makes it: the attributes are each sub-env's, taken from the first
        env = wrap_env(
            gymnasium.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="sync", reference_episodes=2),
            verbose=False,
        )
        assert not hasattr(env, "amp_observation_space")  # a vector env does not forward its sub-envs' attributes
    first = env.unwrapped if num_envs == 1 else env.unwrapped.envs[0].unwrapped
    assert env_attribute(env, "amp_observation_space") is first.amp_observation_space
    assert env_attribute(env, "collect_reference_motions") == first.collect_reference_motions
    assert env_attribute(env, "no_such_attribute", "default") == "default"
    states, _ = env.reset()
    for _ in range(3):
        next_states, _, _, _, infos = env.step(torch.zeros(num_envs, 1))
        amp = np.asarray(infos["amp_obs"]).reshape(num_envs, 6)
        np.testing.assert_array_equal(amp, torch.cat([states, next_states], dim=1).numpy())
        states = next_states
    env.close()


def test_env_attribute_finds_an_attribute_a_gymnasium_wrapper_holds_under_others():
    torch_wrappers = pytest.importorskip("skrl_like.torch.envs.wrappers")

    class Holder(gymnasium.Wrapper):
        motions_per_call = 7

    inner = gymnasium.wrappers.TimeLimit(Holder(gymnasium.make("Pendulum-v1").unwrapped), max_episode_steps=9)
    env = torch_wrappers.wrap_env(gymnasium.wrappers.ClipAction(inner), verbose=False)
    assert not hasattr(env, "motions_per_call")  # neither the outer gymnasium wrappers nor env.unwrapped have it
    assert env_attribute(env, "motions_per_call") == 7
    vector = torch_wrappers.wrap_env(
        gymnasium.vector.SyncVectorEnv([lambda: Holder(gymnasium.make("Pendulum-v1"))]), verbose=False
    )
    assert env_attribute(vector, "motions_per_call") == 7 and env_attribute(vector, "missing", 0) == 0
