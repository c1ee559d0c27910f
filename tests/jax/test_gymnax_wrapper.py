"""GymnaxWrapper: spaces, the autoreset inside the step with the reached observation kept, truncation at the time
limit, the NumPy backend, and wrap_env's detection (and its refusal in the torch backend)."""

import gymnasium
import jax
import numpy as np
import pytest

gymnax = pytest.importorskip("gymnax")

from skrl_like import config  # noqa: E402
from skrl_like.jax.envs.wrappers import GymnaxWrapper, wrap_env  # noqa: E402


def cartpole(num_envs=3, max_steps=5, seed=0):
    env, params = gymnax.make("CartPole-v1")
    return wrap_env(
        env, verbose=False, num_envs=num_envs, env_params=params.replace(max_steps_in_episode=max_steps), seed=seed
    )


def test_spaces_and_shapes_follow_the_wrapper_contract():
    env = cartpole()
    assert isinstance(env, GymnaxWrapper)
    assert env.observation_space.shape == (4,) and env.action_space == gymnasium.spaces.Discrete(2)
    states, info = env.reset()
    assert states.shape == (3, 4) and states.dtype == np.float32 and info == {}
    next_states, rewards, terminated, truncated, info = env.step(np.zeros((3, 1), np.int32))
    assert next_states.shape == (3, 4) and rewards.shape == (3, 1) and rewards.dtype == np.float32
    assert terminated.dtype == np.int8 and truncated.dtype == np.int8
    np.testing.assert_array_equal(info["final_states"], next_states)  # nobody done: the same observations


def test_the_time_limit_truncates_and_resets_keeping_the_reached_observation():
    env = cartpole(max_steps=5)
    states, _ = env.reset()
    actions = np.array([[0], [1], [0]])
    for _ in range(4):  # CartPole cannot fall within 5 steps from its initial state
        states, _, terminated, truncated, info = env.step(actions)
        assert not terminated.any() and not truncated.any()
    next_states, rewards, terminated, truncated, info = env.step(actions)
    np.testing.assert_array_equal(np.asarray(truncated).ravel(), [1, 1, 1])
    np.testing.assert_array_equal(np.asarray(terminated).ravel(), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(rewards).ravel(), [1, 1, 1])
    # the reached observation is one force step from the previous one; the next one is a fresh episode's
    final = np.asarray(info["final_states"])
    assert np.all(np.abs(final[:, 0] - np.asarray(states)[:, 0]) < 0.1)
    assert np.all(np.abs(np.asarray(next_states)) <= 0.05)  # CartPole resets uniformly in [-0.05, 0.05]
    assert not np.allclose(final, next_states)
    # the next episode runs its 5 steps again
    for _ in range(4):
        _, _, _, truncated, _ = env.step(actions)
        assert not truncated.any()


def test_a_fall_is_a_termination():
    env = cartpole(num_envs=1, max_steps=500)
    env.reset()
    for _ in range(100):
        _, _, terminated, truncated, info = env.step(np.ones((1, 1)))  # always push right: the pole falls
        if terminated.any():
            break
    assert terminated.item() == 1 and truncated.item() == 0  # within 100 steps
    assert abs(float(info["final_states"][0, 2])) > 0.2  # past the angle threshold (12 degrees)


def test_the_same_seed_gives_the_same_episodes_and_the_numpy_backend_gives_numpy_arrays():
    previous = config.jax.backend
    try:
        config.jax.backend = "numpy"
        env = cartpole(seed=7)
        states, _ = env.reset()
        assert isinstance(states, np.ndarray)
        outputs = env.step(np.ones((3, 1)))
        assert all(isinstance(x, np.ndarray) for x in outputs[:4])
    finally:
        config.jax.backend = previous
    again = cartpole(seed=7)
    np.testing.assert_array_equal(again.reset()[0], states)
    np.testing.assert_array_equal(again.step(np.ones((3, 1)))[0], outputs[0])
    assert not np.array_equal(cartpole(seed=8).reset()[0], states)


def test_the_transition_is_pure_and_traceable():
    env = cartpole()
    state, states = env.initial_state(jax.random.PRNGKey(0))
    step = jax.jit(env.transition)
    first = step(state, np.ones((3, 1)))
    second = step(state, np.ones((3, 1)))
    np.testing.assert_array_equal(first[1].next_states, second[1].next_states)


def test_wrap_env_arguments_and_the_torch_backend_refuse_clearly():
    env, _ = gymnax.make("CartPole-v1")
    with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
        wrap_env(env, verbose=False, num_envs=0)
    with pytest.raises(TypeError, match="only gymnax, Brax and Playground environments take wrapper arguments"):
        wrap_env(gymnasium.make("CartPole-v1"), verbose=False, num_envs=2)
    torch_wrappers = pytest.importorskip("skrl_like.torch.envs.wrappers")
    with pytest.raises(ValueError, match="written in JAX: wrap it with skrl_like.jax.envs.wrappers.wrap_env"):
        torch_wrappers.wrap_env(env, verbose=False)
