"""JAX gymnasium/gym wrappers: output contract, discrete actions, NaN check and same-step autoreset."""

import functools

import gymnasium
import jax
import numpy as np
import pytest
from gymnasium import spaces

from skrl_like import config
from skrl_like.core.envs.vector_autoreset import SameStepAutoreset, get_autoreset_mode
from skrl_like.jax.envs.wrappers import GymnasiumWrapper, MultiAgentEnvWrapper, PettingZooWrapper, wrap_env
from skrl_like.jax.envs.wrappers.gym_envs import GymWrapper

MAX_STEPS = 12  # short time limit: many truncations as well as terminations in a few hundred steps


@pytest.fixture(params=["numpy", "jax"])
def backend(request):
    previous = config.jax.backend
    config.jax.backend = request.param
    yield request.param
    config.jax.backend = previous


def _array_type(backend):
    return jax.Array if backend == "jax" else np.ndarray


class DictObservationEnv(gymnasium.Env):
    observation_space = spaces.Dict(
        {"position": spaces.Box(-10, 10, (2,), dtype=np.float64), "gear": spaces.Discrete(3)}
    )
    action_space = spaces.Box(-1, 1, (1,))

    def __init__(self, nan_at_step=None):
        self.steps = 0
        self.nan_at_step = nan_at_step

    def _observation(self):
        position = np.array([self.steps, -self.steps], dtype=np.float64)
        if self.steps == self.nan_at_step:
            position[0] = np.nan
        return {"position": position, "gear": self.steps % 3}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        assert action.shape == (1,) and action.dtype == np.float32
        self.steps += 1
        return self._observation(), 0.5, self.steps >= 4, False, {}


def test_cartpole_vector_outputs(backend):
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync"), verbose=False)
    assert isinstance(env, GymnasiumWrapper) and env.num_envs == 3
    assert env.observation_space.shape == (4,) and env.action_space == spaces.Discrete(2)
    observations, _ = env.reset()
    assert isinstance(observations, _array_type(backend)) and observations.shape == (3, 4)
    # discrete actions arrive as (num_envs, 1); gymnasium >= 1.0 rejects that shape, the wrapper must reshape
    actions = np.array([[0], [1], [1]])
    if backend == "jax":
        actions = jax.numpy.asarray(actions)
    observations, rewards, terminated, truncated, info = env.step(actions)
    for value in (observations, rewards, terminated, truncated):
        assert isinstance(value, _array_type(backend))
    assert observations.shape == (3, 4) and observations.dtype == np.float32
    assert rewards.shape == (3, 1) and rewards.dtype == np.float32
    assert terminated.shape == truncated.shape == (3, 1)
    assert terminated.dtype == truncated.dtype == np.int8
    assert isinstance(info, dict)
    env.close()


def test_pendulum_single_env_outputs(backend):
    env = wrap_env(gymnasium.make("Pendulum-v1"), wrapper="gymnasium", verbose=False)
    assert env.num_envs == 1
    observations, _ = env.reset()
    assert observations.shape == (1, 3) and isinstance(observations, _array_type(backend))
    observations, rewards, terminated, truncated, _ = env.step(jax.numpy.zeros((1, 1)))
    assert observations.shape == (1, 3) and observations.dtype == np.float32
    assert rewards.shape == terminated.shape == truncated.shape == (1, 1)
    assert terminated.dtype == np.int8
    env.close()


def test_dict_observations_are_flat_float32_in_sorted_key_order(backend):
    env = wrap_env(DictObservationEnv(), wrapper="gymnasium", verbose=False)
    env.reset()
    observations, rewards, _, _, _ = env.step(np.array([[0.25]]))
    # keys sorted: gear (1 column), position (2 columns); step 1 -> gear 1, position (1, -1)
    np.testing.assert_array_equal(np.asarray(observations), [[1.0, 1.0, -1.0]])
    assert observations.dtype == np.float32 and float(rewards[0, 0]) == 0.5


def test_discrete_actions_reach_the_vector_env_as_a_flat_batch():
    received = []

    class Recorder(gymnasium.vector.VectorActionWrapper):
        def actions(self, actions):
            received.append(actions)
            return actions

    env = GymnasiumWrapper(Recorder(gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")))
    env.reset()
    env.step(jax.numpy.array([[1], [0]]))
    assert received[0].shape == (2,) and received[0].tolist() == [1, 0]


def test_non_finite_values_raise_a_clear_error_naming_the_step_and_sub_environment(backend):
    env = GymnasiumWrapper(DictObservationEnv(nan_at_step=2))
    env.reset()
    env.step(np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"DictObservationEnv.*non-finite.*observations at step 2.*check_finite"):
        env.step(np.zeros((1, 1)))

    vector = GymnasiumWrapper(
        gymnasium.vector.SyncVectorEnv([DictObservationEnv, lambda: DictObservationEnv(nan_at_step=1)])
    )
    vector.reset()
    with pytest.raises(ValueError, match=r"sub-environments \[1\]"):
        vector.step(np.zeros((2, 1)))

    unchecked = GymnasiumWrapper(DictObservationEnv(nan_at_step=1), check_finite=False)
    unchecked.reset()
    states, *_ = unchecked.step(np.zeros((1, 1)))
    assert np.isnan(np.asarray(states)).sum() == 1


def test_actions_of_the_wrong_shape_name_the_expected_shape(backend):
    vector = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync"), verbose=False)
    vector.reset()
    with pytest.raises(ValueError, match=r"shape \(3, 2\).*CartPole-v1.*\(3, 1\)"):
        vector.step(np.zeros((3, 2), np.int32))
    single = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    single.reset()
    with pytest.raises(ValueError, match="action space"):
        single.step(np.array([[1, 0]]))


class BufferReusingEnv(gymnasium.Env):
    """Returns the same observation buffer every step, as some simulators do."""

    observation_space = spaces.Box(-10, 10, (2,), dtype=np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self):
        self.buffer = np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        self.buffer[:] = 0.0
        return self.buffer, {}

    def step(self, action):
        self.buffer += 1.0
        return self.buffer, 1.0, False, False, {}


def test_observations_do_not_alias_a_buffer_the_env_reuses(backend):
    env = GymnasiumWrapper(BufferReusingEnv())
    first, _ = env.reset()
    second, *_ = env.step(np.array([[1]]))
    env.step(np.array([[1]]))
    np.testing.assert_array_equal(np.asarray(first), [[0.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(second), [[1.0, 1.0]])


class ImageEnv(gymnasium.Env):
    observation_space = spaces.Box(0, 255, (2, 2), dtype=np.uint8)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.full((2, 2), 200, np.uint8), {}

    def step(self, action):
        return np.full((2, 2), 255, np.uint8), 1.0, False, False, {}


def test_integer_box_observations_are_flat_float32_as_in_torch(backend):
    env = GymnasiumWrapper(ImageEnv())
    states, _ = env.reset()
    assert states.dtype == np.float32 and np.asarray(states).tolist() == [[200.0] * 4]
    states, *_ = env.step(np.array([[0]]))
    assert states.dtype == np.float32 and np.asarray(states).tolist() == [[255.0] * 4]


def test_gym_wrapper_old_api_reads_truncation_from_info(backend, old_gym_env):
    env = GymWrapper(old_gym_env)
    states, info = env.reset()
    assert states.shape == (1, 2) and info == {}
    states, rewards, terminated, truncated, _ = env.step(np.array([[2]]))
    assert isinstance(states, _array_type(backend))
    assert np.asarray(states).tolist() == [[2.0, 2.0]] and np.asarray(rewards).tolist() == [[1.0]]
    assert np.asarray(truncated).tolist() == [[1]] and np.asarray(terminated).tolist() == [[0]]


def _make_cartpole():
    return gymnasium.make("CartPole-v1", max_episode_steps=MAX_STEPS)


def _run_against_reference(vector_env, seed=123, steps=250):
    """Step the wrapper and one plain env per sub-environment (reset on done) with the same actions.

    The plain envs are the independent reference: reset exactly when an episode ends, never stepped with an
    action meant for another episode.
    """
    num_envs = vector_env.num_envs
    vector_env.reset(seed=seed)  # seed the sub-envs; the wrapper's own reset continues their generators
    env = GymnasiumWrapper(vector_env)
    references = [_make_cartpole() for _ in range(num_envs)]
    expected = []
    for index, reference in enumerate(references):
        reference.reset(seed=seed + index)
        expected.append(reference.reset()[0])
    observations, _ = env.reset()
    np.testing.assert_allclose(observations, np.stack(expected), rtol=1e-6)

    rng = np.random.default_rng(0)
    lengths, expected_lengths = [], []
    running, expected_running = np.zeros(num_envs, int), np.zeros(num_envs, int)
    for _ in range(steps):
        actions = rng.integers(0, 2, (num_envs, 1))
        observations, rewards, terminated, truncated, _ = env.step(actions)
        # CartPole pays 1 on every real step: a 0 would be gymnasium's next-step "reset step"
        assert (rewards == 1).all()
        running += 1
        for index, reference in enumerate(references):
            observation, reward, reference_terminated, reference_truncated, _ = reference.step(int(actions[index, 0]))
            expected_running[index] += 1
            if reference_terminated or reference_truncated:
                expected_lengths.append(expected_running[index])
                expected_running[index] = 0
                observation, _ = reference.reset()
            assert terminated[index, 0] == reference_terminated and truncated[index, 0] == reference_truncated
            np.testing.assert_allclose(observations[index], observation, rtol=1e-6)
        done = (terminated | truncated)[:, 0].astype(bool)
        lengths.extend(running[done].tolist())
        running[done] = 0
    env.close()
    assert sorted(lengths) == sorted(expected_lengths)
    assert max(lengths) == MAX_STEPS and min(lengths) < MAX_STEPS  # both truncations and terminations occurred
    return lengths


@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
def test_sync_vector_env_transitions_never_cross_episode_boundaries(mode):
    autoreset_mode = gymnasium.vector.AutoresetMode[mode.upper()]
    vector_env = gymnasium.vector.SyncVectorEnv([_make_cartpole] * 3, autoreset_mode=autoreset_mode)
    assert get_autoreset_mode(vector_env) == mode
    _run_against_reference(vector_env)


def test_async_vector_env_transitions_never_cross_episode_boundaries():
    vector_env = gymnasium.vector.AsyncVectorEnv(
        [functools.partial(gymnasium.make, "CartPole-v1", max_episode_steps=MAX_STEPS)] * 2, context="spawn"
    )
    assert get_autoreset_mode(vector_env) == "next_step"
    _run_against_reference(vector_env, steps=120)


def test_async_without_shared_memory_in_next_step_mode_is_rejected():
    class FakeAsync(gymnasium.vector.AsyncVectorEnv):
        def __init__(self):  # no worker processes: only the attributes the check reads
            self.num_envs = 2
            self.shared_memory = False
            self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

        def __del__(self):
            pass

    with pytest.raises(ValueError, match="shared_memory=True"):
        SameStepAutoreset(FakeAsync())


def test_wrap_env_rejects_unknown_and_unsupported_tags():
    env = gymnasium.make("CartPole-v1")
    with pytest.raises(ValueError, match="Unknown wrapper type"):
        wrap_env(env, wrapper="nonsense", verbose=False)
    with pytest.raises(ValueError, match="not supported"):
        wrap_env(env, wrapper="isaacgym-preview4", verbose=False)
    with pytest.raises(ValueError, match="Unknown wrapper type"):
        wrap_env(object(), verbose=False)


class TwoAgentParallelEnv:
    possible_agents = ["a", "b"]
    agents = ["a", "b"]
    observation_spaces = {"a": spaces.Box(-1, 1, (2,)), "b": spaces.Discrete(3)}
    action_spaces = {"a": spaces.Box(-1, 1, (1,)), "b": spaces.Discrete(2)}
    state_space = spaces.Box(-1, 1, (4,))

    def reset(self):
        return {"a": np.zeros(2, np.float32), "b": 1}, {"a": {}, "b": {}}

    def step(self, actions):
        assert actions["a"].shape == (1,) and isinstance(actions["b"], int)
        observations = {"a": np.ones(2, np.float32), "b": actions["b"]}
        return observations, {"a": 1.0, "b": 2.0}, {"a": False, "b": True}, {"a": False, "b": False}, {}

    def state(self):
        return np.arange(4, dtype=np.float32)


def test_pettingzoo_wrapper_dicts(backend):
    env = wrap_env(TwoAgentParallelEnv(), wrapper="pettingzoo", verbose=False)
    assert isinstance(env, PettingZooWrapper) and isinstance(env, MultiAgentEnvWrapper)
    assert env.num_agents == 2 and env.max_num_agents == 2 and env.state_space("a").shape == (4,)
    observations, infos = env.reset()
    assert observations["a"].shape == (1, 2) and observations["b"].tolist() == [[1]]
    observations, rewards, terminated, truncated, _ = env.step({"a": np.zeros((1, 1)), "b": np.array([[1]])})
    assert isinstance(rewards["a"], _array_type(backend))
    assert rewards["b"].dtype == np.float32 and rewards["b"].shape == (1, 1)
    assert terminated["b"].dtype == np.int8 and int(terminated["b"][0, 0]) == 1
    assert env.state().shape == (1, 4)


def test_composite_actions_reach_each_sub_environment_in_its_space(backend, tuple_action_vector_env):
    env = GymnasiumWrapper(tuple_action_vector_env)
    env.reset()
    # flat (num_envs, 1 + 2): the Discrete part, then the Box part; each sub-env checks space.contains(action)
    states, *_ = env.step(np.array([[1, 0.5, -0.5], [2, 0.1, 0.2]], np.float32))
    np.testing.assert_allclose(np.asarray(states), [[0.1, 0.1], [0.2, 0.2]])


class IntegerBoxParallelEnv(TwoAgentParallelEnv):
    observation_spaces = {"a": spaces.Box(0, 255, (2,), np.uint8), "b": spaces.Discrete(3)}

    def reset(self):
        return {"a": np.full(2, 7, np.uint8), "b": 1}, {"a": {}, "b": {}}


def test_pettingzoo_integer_box_observations_are_float32(backend):
    env = wrap_env(IntegerBoxParallelEnv(), wrapper="pettingzoo", verbose=False)
    observations, _ = env.reset()
    assert observations["a"].dtype == np.float32 and np.asarray(observations["a"]).tolist() == [[7.0, 7.0]]
    assert np.asarray(observations["b"]).dtype.kind == "i"


def test_shared_autoreset_rejects_vector_envs_without_partial_resets_and_reports_final_observations():
    import gymnasium as gym

    with pytest.raises(ValueError, match="does not support resetting single sub-environments"):
        wrap_env(gym.make_vec("CartPole-v1", num_envs=2), verbose=False)  # CartPoleVectorEnv
    env = wrap_env(gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    env.reset()
    for _ in range(500):
        _, _, terminated, truncated, info = env.step(np.zeros((2, 1), np.int64))
        if (terminated | truncated).any():
            done = (terminated | truncated).reshape(-1).astype(bool)
            np.testing.assert_array_equal(info["_final_obs"], done)
            assert all(info["final_obs"][i].shape == (4,) for i in np.nonzero(done)[0])
            break
    else:
        pytest.fail("no episode ended")


# -- issue 10 --------------------------------------------------------------------------------------------------


@pytest.fixture
def global_seed(monkeypatch):
    """set_seed for one test: the seed the wrappers read is put back afterwards."""
    import skrl_like.core.seeding
    import skrl_like.utils

    monkeypatch.setattr(skrl_like.core.seeding, "_seed", None, raising=False)
    return skrl_like.utils.set_seed


def test_old_gym_api_env_wrapped_as_gymnasium_is_told_to_use_the_gym_wrapper(
    old_api_gymnasium_env, old_gym_env, global_seed
):
    # auto-detected as gymnasium; its 2-element observation used to be unpacked silently as (observation, info)
    env = wrap_env(old_api_gymnasium_env, verbose=False)
    assert isinstance(env, GymnasiumWrapper)
    with pytest.raises(ValueError, match=r"OldApiGymnasiumEnv follows the OpenAI Gym API.*wrapper='gym'"):
        env.reset()
    global_seed(3)
    with pytest.raises(ValueError, match=r"reset\(\) does not take gymnasium's seed argument.*wrapper='gym'"):
        wrap_env(old_gym_env, wrapper="gymnasium", verbose=False).reset()

    env_class = type(old_api_gymnasium_env)
    env_class.reset = lambda self, *, seed=None, options=None: (np.zeros(2, np.float32), {})
    env = GymnasiumWrapper(env_class())
    env.reset()
    with pytest.raises(ValueError, match=r"step\(\) returned a tuple of 4 values instead of.*wrapper='gym'"):
        env.step(np.array([[1]]))


def test_render_without_a_render_mode_warns_once_and_skips_the_env(monkeypatch):
    from skrl_like import logger

    renders = []

    class Env(gymnasium.Env):
        observation_space = spaces.Box(-1, 1, (1,), np.float32)
        action_space = spaces.Discrete(2)

        def __init__(self, render_mode=None):
            self.render_mode = render_mode

        def render(self):
            renders.append(self.render_mode)

    warnings = []
    monkeypatch.setattr(logger, "warning", warnings.append)
    env = GymnasiumWrapper(Env())
    assert env.render() is None and env.render() is None and renders == []
    assert len(warnings) == 1 and "render_mode is None" in warnings[0]
    GymnasiumWrapper(Env(render_mode="human")).render()
    assert renders == ["human"] and len(warnings) == 1


@pytest.mark.parametrize("vectorization_mode", [None, "sync"])
def test_first_reset_seeds_the_env_from_set_seed(backend, global_seed, vectorization_mode):
    global_seed(42)
    if vectorization_mode is None:
        env = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    else:
        env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync"), verbose=False)
    observations, _ = env.reset()
    # independent reference: gymnasium's own seeded reset, seed + i for sub-environment i
    expected = [gymnasium.make("CartPole-v1").reset(seed=42 + index)[0] for index in range(env.num_envs)]
    np.testing.assert_array_equal(np.asarray(observations), np.stack(expected))


def test_set_seed_makes_runs_reproducible(global_seed):
    def rollout(seed):
        global_seed(seed)
        env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
        actions = np.random.default_rng(0)  # the same actions in every run: only the env's seed varies
        observations = [np.asarray(env.reset()[0])]
        for _ in range(40):
            observations.append(np.asarray(env.step(actions.integers(0, 2, (2, 1)))[0]))
        return np.stack(observations)

    first, second, other = rollout(7), rollout(7), rollout(8)
    np.testing.assert_array_equal(first, second)
    assert not np.allclose(first[0], other[0])


def test_an_env_seeded_before_wrapping_keeps_its_seed(global_seed):
    global_seed(42)
    env, reference = gymnasium.make("CartPole-v1"), gymnasium.make("CartPole-v1")
    env.reset(seed=5)
    reference.reset(seed=5)
    observations, _ = wrap_env(env, verbose=False).reset()
    np.testing.assert_array_equal(np.asarray(observations)[0], reference.reset()[0])  # the seed-5 stream goes on
