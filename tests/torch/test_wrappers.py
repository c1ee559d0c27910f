"""Environment wrappers (torch): output contract, episode boundaries of vector envs, actions, errors."""

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import RecordEpisodeStatistics

from skrl_like.torch.envs.wrappers import MultiAgentEnvWrapper, Wrapper, wrap_env
from skrl_like.torch.envs.wrappers.gym_envs import GymWrapper
from skrl_like.torch.envs.wrappers.gymnasium_envs import GymnasiumWrapper
from skrl_like.torch.envs.wrappers.pettingzoo_envs import PettingZooWrapper

# CartPole's initial state is uniform in [-0.05, 0.05]; it terminates beyond these limits
RESET_BOUND = 0.05
X_LIMIT, THETA_LIMIT = 2.4, 12 * 2 * np.pi / 360


class _DictObservationEnv(gymnasium.Env):
    """A deterministic env whose observation is a Dict (keys deliberately not in sorted order)."""

    observation_space = spaces.Dict(
        {
            "velocity": spaces.Box(-10, 10, (3,), np.float32),
            "mode": spaces.Discrete(4),
            "position": spaces.Box(-10, 10, (2,), np.float32),
        }
    )
    action_space = spaces.Box(-1, 1, (2,), np.float32)

    def __init__(self, nan_at_step: int = -1) -> None:
        self._nan_at_step = nan_at_step
        self._time = 0

    def _observation(self) -> dict:
        time = self._time
        velocity = np.full(3, 0.5 * time, np.float32)
        if time == self._nan_at_step:
            velocity[1] = np.nan
        return {"velocity": velocity, "mode": time % 4, "position": np.array([time, -time], np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._time = 0
        return self._observation(), {}

    def step(self, action):
        assert action.shape == (2,) and action.dtype == np.float32
        self._time += 1
        return self._observation(), float(action.sum()), self._time >= 5, False, {}


def _cartpole_factory(max_episode_steps: int = 15):
    # short time limit so that both terminations and truncations happen; per-env statistics are the ground truth
    return lambda: RecordEpisodeStatistics(gymnasium.make("CartPole-v1", max_episode_steps=max_episode_steps))


def test_cartpole_vector_shapes_and_discrete_actions():
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync"), verbose=False)
    assert isinstance(env, GymnasiumWrapper) and env.num_envs == 3 and env.num_agents == 1
    assert env.observation_space.shape == (4,) and env.action_space == spaces.Discrete(2)
    states, info = env.reset()
    assert states.shape == (3, 4) and states.dtype == torch.float32 and isinstance(info, dict)
    assert env.reset()[0] is states  # later resets return the latest observations without resetting
    for actions in (torch.tensor([[0], [1], [1]]), torch.tensor([[1.0], [0.0], [1.0]])):
        # policies produce (num_envs, 1); gymnasium >= 1.0 wants (num_envs,)
        next_states, rewards, terminated, truncated, info = env.step(actions)
        assert next_states.shape == (3, 4) and next_states.dtype == torch.float32
        assert rewards.shape == (3, 1) and rewards.dtype == torch.float32
        assert terminated.shape == truncated.shape == (3, 1)
        assert terminated.dtype == truncated.dtype == torch.bool
        assert next_states.device == env.device
    with pytest.raises(ValueError, match=r"shape \(3, 2\).*\(3, 1\)"):
        env.step(torch.zeros(3, 2, dtype=torch.int64))
    env.close()


def test_single_envs_discrete_and_box():
    cartpole = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    states, _ = cartpole.reset()
    assert cartpole.num_envs == 1 and states.shape == (1, 4)
    outputs = cartpole.step(torch.tensor([[1]]))
    assert [tuple(tensor.shape) for tensor in outputs[:4]] == [(1, 4), (1, 1), (1, 1), (1, 1)]
    assert outputs[1].item() == 1.0
    with pytest.raises(ValueError, match="action space"):
        cartpole.step(torch.tensor([[1, 0]]))

    pendulum = wrap_env(gymnasium.make("Pendulum-v1"), wrapper="gymnasium", verbose=False)
    states, _ = pendulum.reset()
    assert states.shape == (1, 3) and states.dtype == torch.float32
    next_states, rewards, terminated, truncated, _ = pendulum.step(torch.tensor([[0.5]]))
    assert next_states.shape == (1, 3) and rewards.shape == (1, 1) and rewards.dtype == torch.float32
    assert terminated.dtype == torch.bool and truncated.shape == (1, 1)
    # attribute forwarding to the wrapped env
    assert pendulum.spec.id == "Pendulum-v1"
    with pytest.raises(AttributeError, match="PendulumEnv.*no_such_attribute"):
        _ = pendulum.no_such_attribute
    cartpole.close()
    pendulum.close()


def test_pendulum_vector_box_actions():
    env = wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    states, _ = env.reset()
    assert states.shape == (2, 3) and env.action_space.shape == (1,)
    next_states, rewards, _, _, _ = env.step(torch.tensor([[2.0], [-2.0]]))
    assert next_states.shape == (2, 3) and rewards.shape == (2, 1)
    # Pendulum's reward is -(theta^2 + 0.1 theta_dot^2 + 0.001 u^2) computed from the state before the step
    cos, sin, velocity = states[0].tolist()
    theta = np.arctan2(sin, cos)
    expected = -(theta**2 + 0.1 * velocity**2 + 0.001 * 4.0)
    assert rewards[0, 0].item() == pytest.approx(expected, rel=1e-4)
    env.close()


def test_dict_observations_flatten_in_sorted_key_order():
    single = GymnasiumWrapper(_DictObservationEnv())
    states, _ = single.reset()
    assert states.tolist() == [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    states, rewards, terminated, _, _ = single.step(torch.tensor([[0.25, 0.5]]))
    # sorted keys: mode, position (2), velocity (3)
    assert states.tolist() == [[1.0, 1.0, -1.0, 0.5, 0.5, 0.5]] and states.dtype == torch.float32
    assert rewards.tolist() == [[0.75]] and not terminated.item()

    vector = GymnasiumWrapper(SyncVectorEnv([_DictObservationEnv, _DictObservationEnv]))
    states, _ = vector.reset()
    assert states.shape == (2, 6)
    states, _, _, _, _ = vector.step(torch.zeros(2, 2))
    assert states.tolist() == [[1.0, 1.0, -1.0, 0.5, 0.5, 0.5]] * 2
    vector.close()


@pytest.mark.parametrize("mode", ["sync", "async", "same-step", "disabled"])
def test_no_transition_crosses_an_episode_boundary(mode):
    factories = [_cartpole_factory() for _ in range(4)]
    if mode == "async":
        vector_env = AsyncVectorEnv(factories)
    elif mode == "same-step":
        vector_env = SyncVectorEnv(factories, autoreset_mode=AutoresetMode.SAME_STEP)
    elif mode == "disabled":
        vector_env = SyncVectorEnv(factories, autoreset_mode=AutoresetMode.DISABLED)
    else:
        vector_env = SyncVectorEnv(factories)
    env = wrap_env(vector_env, verbose=False)
    env.reset()
    generator = torch.Generator().manual_seed(0)
    lengths = np.zeros(4, dtype=np.int64)
    episodes = truncations = 0
    for _ in range(300):
        next_states, rewards, terminated, truncated, info = env.step(torch.randint(0, 2, (4, 1), generator=generator))
        # CartPole pays 1 for every real step: a 0 would be the bogus "reset step" of next-step autoreset
        assert torch.all(rewards == 1.0)
        lengths += 1
        done = (terminated | truncated).view(-1).numpy()
        if not done.any():
            continue
        # the env's own per-episode statistics (sub-env wrapper) give the ground-truth episode lengths
        statistics = info["final_info"]["episode"] if "final_info" in info else info["episode"]
        np.testing.assert_array_equal(statistics["l"][done], lengths[done])
        for index in np.nonzero(done)[0]:
            # next_states already holds the first observation of the new episode; the terminal one is in info
            assert torch.all(next_states[index].abs() <= RESET_BOUND)
            final = info["final_obs"][index]
            assert truncated[index].item() or abs(final[0]) > X_LIMIT or abs(final[2]) > THETA_LIMIT
            assert info["_final_obs"][index]
        episodes += int(done.sum())
        truncations += int(truncated.sum())
        lengths[done] = 0
    assert episodes > 30 and truncations > 0
    env.close()


def test_vector_envs_that_cannot_reset_single_sub_environments_are_rejected():
    # make_vec without vectorization_mode picks CartPoleVectorEnv, whose reset ignores reset_mask
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=2), verbose=False)
    vector_env = AsyncVectorEnv([_cartpole_factory()] * 2, shared_memory=False)
    with pytest.raises(ValueError, match="shared_memory=True"):
        wrap_env(vector_env, verbose=False)
    vector_env.close()


def test_non_finite_values_raise_a_clear_error():
    env = GymnasiumWrapper(_DictObservationEnv(nan_at_step=3))
    env.reset()
    env.step(torch.zeros(1, 2))
    env.step(torch.zeros(1, 2))
    with pytest.raises(ValueError, match=r"_DictObservationEnv.*non-finite.*observations at step 3.*check_finite"):
        env.step(torch.zeros(1, 2))

    vector = GymnasiumWrapper(SyncVectorEnv([_DictObservationEnv, lambda: _DictObservationEnv(nan_at_step=1)]))
    vector.reset()
    with pytest.raises(ValueError, match=r"sub-environments \[1\]"):
        vector.step(torch.zeros(2, 2))

    unchecked = GymnasiumWrapper(_DictObservationEnv(nan_at_step=1), check_finite=False)
    unchecked.reset()
    states, *_ = unchecked.step(torch.zeros(1, 2))
    assert torch.isnan(states).sum().item() == 1


def test_composite_actions_reach_each_sub_environment_in_its_space(tuple_action_vector_env):
    env = GymnasiumWrapper(tuple_action_vector_env)
    env.reset()
    # flat (num_envs, 1 + 2): the Discrete part, then the Box part; each sub-env checks space.contains(action)
    states, *_ = env.step(torch.tensor([[1, 0.5, -0.5], [2, 0.1, 0.2]]))
    torch.testing.assert_close(states, torch.tensor([[0.1, 0.1], [0.2, 0.2]]))


def test_wrap_env_tags():
    env = gymnasium.make("CartPole-v1")
    assert isinstance(wrap_env(env, verbose=False), Wrapper)
    with pytest.raises(ValueError, match="not supported in skrl_like"):
        wrap_env(env, wrapper="robosuite")
    with pytest.raises(ValueError, match="not supported in skrl_like"):
        wrap_env(env, wrapper="isaacgym-preview4")
    with pytest.raises(ValueError, match="Unknown wrapper type: no-such-tag"):
        wrap_env(env, wrapper="no-such-tag")
    with pytest.raises(ValueError, match="Unknown wrapper type"):
        wrap_env(object(), verbose=False)


def test_gym_wrapper_old_api_reads_truncation_from_info(old_gym_env):
    env = GymWrapper(old_gym_env)
    states, info = env.reset()
    assert states.shape == (1, 2) and info == {}
    states, rewards, terminated, truncated, _ = env.step(torch.tensor([[2]]))
    assert states.tolist() == [[2.0, 2.0]] and rewards.tolist() == [[1.0]]
    assert truncated.item() and not terminated.item()


class _ParallelEnv:
    """The PettingZoo parallel API, duck-typed (PettingZoo is not installed here)."""

    possible_agents = ["first", "second"]
    agents = ["first", "second"]
    observation_spaces = {"first": spaces.Box(-1, 1, (2,), np.float32), "second": spaces.Discrete(5)}
    action_spaces = {"first": spaces.Discrete(3), "second": spaces.Box(-1, 1, (2,), np.float32)}
    state_space = spaces.Box(-1, 1, (3,), np.float32)

    def reset(self):
        return {"first": np.array([0.5, -0.5], np.float32), "second": 4}, {"first": {}, "second": {}}

    def step(self, actions):
        assert isinstance(actions["first"], int) and actions["second"].shape == (2,)
        observations = {"first": np.array([actions["first"], 0.0], np.float32), "second": 1}
        return (
            observations,
            {"first": 1.0, "second": -1.0},
            {"first": False, "second": True},
            {"first": False, "second": False},
            {},
        )

    def state(self):
        return np.array([1.0, 2.0, 3.0], np.float32)


def test_pettingzoo_wrapper_dicts():
    env = wrap_env(_ParallelEnv(), wrapper="pettingzoo", verbose=False)
    assert isinstance(env, (PettingZooWrapper, MultiAgentEnvWrapper))
    assert env.num_agents == 2 and env.max_num_agents == 2 and env.num_envs == 1
    assert env.observation_space("second") == spaces.Discrete(5)
    assert env.state_space("first").shape == (3,)
    observations, infos = env.reset()
    assert observations["first"].tolist() == [[0.5, -0.5]] and observations["second"].dtype == torch.int32
    observations, rewards, terminated, truncated, _ = env.step(
        {"first": torch.tensor([[2]]), "second": torch.tensor([[0.1, 0.2]])}
    )
    assert observations["first"].tolist() == [[2.0, 0.0]]
    assert rewards["second"].tolist() == [[-1.0]] and rewards["second"].dtype == torch.float32
    assert terminated["second"].tolist() == [[True]] and truncated["first"].dtype == torch.bool
    assert env.state().tolist() == [[1.0, 2.0, 3.0]]


class _IntegerBoxParallelEnv(_ParallelEnv):
    observation_spaces = {"first": spaces.Box(0, 255, (2,), np.uint8), "second": spaces.Discrete(5)}

    def reset(self):
        return {"first": np.full(2, 7, np.uint8), "second": 4}, {"first": {}, "second": {}}


def test_pettingzoo_integer_box_observations_are_float32():
    env = wrap_env(_IntegerBoxParallelEnv(), wrapper="pettingzoo", verbose=False)
    observations, _ = env.reset()
    assert observations["first"].dtype == torch.float32 and observations["first"].tolist() == [[7.0, 7.0]]
    assert observations["second"].dtype == torch.int32


# -- issue 10 --------------------------------------------------------------------------------------------------


@pytest.fixture
def global_seed(monkeypatch):
    """set_seed for one test: the seed the wrappers read is put back afterwards."""
    import skrl_like.core.seeding
    import skrl_like.utils

    monkeypatch.setattr(skrl_like.core.seeding, "_seed", None)
    return skrl_like.utils.set_seed


def test_old_gym_api_env_wrapped_as_gymnasium_is_told_to_use_the_gym_wrapper(
    old_api_gymnasium_env, old_gym_env, global_seed
):
    # auto-detected as gymnasium; its 2-element observation used to be unpacked silently as (observation, info)
    env = wrap_env(old_api_gymnasium_env, verbose=False)
    assert isinstance(env, GymnasiumWrapper)
    with pytest.raises(
        ValueError,
        match=r"OldApiGymnasiumEnv follows the OpenAI Gym API.*reset\(\) returned a "
        r"ndarray of shape \(2,\).*wrapper='gym'",
    ):
        env.reset()
    # with a seed to pass, gymnasium's reset(seed=...) is refused by the old signature: same advice
    global_seed(3)
    with pytest.raises(ValueError, match=r"reset\(\) does not take gymnasium's seed argument.*wrapper='gym'"):
        wrap_env(old_gym_env, wrapper="gymnasium", verbose=False).reset()


def test_old_gym_api_step_is_told_to_use_the_gym_wrapper(old_api_gymnasium_env):
    env_class = type(old_api_gymnasium_env)
    env_class.reset = lambda self, *, seed=None, options=None: (np.zeros(2, np.float32), {})
    env = GymnasiumWrapper(env_class())
    env.reset()
    with pytest.raises(ValueError, match=r"step\(\) returned a tuple of 4 values instead of.*wrapper='gym'"):
        env.step(torch.tensor([[1]]))


class _RenderCounter(gymnasium.Env):
    observation_space = spaces.Box(-1, 1, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.renders = 0

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, False, False, {}

    def render(self):
        self.renders += 1
        return np.zeros((2, 2, 3), np.uint8)


def test_render_without_a_render_mode_warns_once_and_skips_the_env(monkeypatch):
    from skrl_like import logger

    warnings = []
    monkeypatch.setattr(logger, "warning", warnings.append)
    single = GymnasiumWrapper(_RenderCounter())
    vector = GymnasiumWrapper(SyncVectorEnv([_RenderCounter, _RenderCounter]))
    for _ in range(3):
        assert single.render() is None and vector.render() is None
    assert single.unwrapped.renders == 0 and [env.renders for env in vector.unwrapped.envs] == [0, 0]
    assert len(warnings) == 2 and "render_mode is None" in warnings[0] and "headless" in warnings[0]

    drawing = GymnasiumWrapper(_RenderCounter(render_mode="rgb_array"))
    assert drawing.render().shape == (2, 2, 3) and drawing.unwrapped.renders == 1 and len(warnings) == 2


def _first_observation(seed):
    # independent reference: gymnasium's own seeded reset
    return gymnasium.make("CartPole-v1").reset(seed=seed)[0]


@pytest.mark.parametrize("vectorization_mode", ["single", "sync", "async"])
def test_first_reset_seeds_the_env_from_set_seed(global_seed, vectorization_mode):
    global_seed(42)
    if vectorization_mode == "single":
        env = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    else:
        env = wrap_env(
            gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode=vectorization_mode), verbose=False
        )
    states, _ = env.reset()
    expected = [_first_observation(42 + index) for index in range(env.num_envs)]
    np.testing.assert_array_equal(states.numpy(), np.stack(expected))
    env.close()


def test_in_a_distributed_run_each_rank_seeds_its_envs_apart_from_the_others(global_seed, monkeypatch):
    import skrl_like.core.seeding
    from skrl_like import config

    monkeypatch.setattr(skrl_like.core.seeding, "_rank", 0)
    monkeypatch.setattr(config.torch, "_world_size", 2)  # rank 1 of 2 (no process group is needed to seed)
    monkeypatch.setattr(config.torch, "_rank", 1)
    assert global_seed(42) == 43  # the generators' seed gets the rank added (skrl)
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    states, _ = env.reset()
    # sub-environment i of rank 1 gets 42 + 1 * num_envs + i: rank 0's are 42 and 43, so none is shared
    np.testing.assert_array_equal(states.numpy(), np.stack([_first_observation(44), _first_observation(45)]))
    env.close()


def _rollout(seed, steps=40):
    if seed is not None:
        from skrl_like.utils import set_seed

        set_seed(seed)
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    actions = np.random.default_rng(0)  # the same action sequence in every run: only the env's seed varies
    states = [env.reset()[0]]
    for _ in range(steps):
        states.append(env.step(torch.from_numpy(actions.integers(0, 2, (2, 1))))[0])
    env.close()
    return torch.stack(states).numpy()


def test_set_seed_makes_runs_reproducible(global_seed):
    first, second, other = _rollout(7), _rollout(7), _rollout(8)
    np.testing.assert_array_equal(first, second)
    assert not np.allclose(first[0], other[0])


def test_an_env_seeded_before_wrapping_keeps_its_seed(global_seed):
    global_seed(42)
    env = gymnasium.make("CartPole-v1")
    env.reset(seed=5)
    reference = gymnasium.make("CartPole-v1")
    reference.reset(seed=5)
    states, _ = wrap_env(env, verbose=False).reset()
    np.testing.assert_array_equal(states.numpy()[0], reference.reset()[0])  # the seed-5 stream goes on


def test_an_async_vector_env_seeded_before_wrapping_keeps_its_seeds(global_seed):
    # the workers' envs are gymnasium.make stacks: the check must see through their wrappers
    global_seed(42)
    vector = gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="async")
    vector.reset(seed=5)
    states, _ = wrap_env(vector, verbose=False).reset()
    expected = []
    for index in range(2):
        reference = gymnasium.make("CartPole-v1")
        reference.reset(seed=5 + index)
        expected.append(reference.reset()[0])  # the seed-(5 + i) stream goes on
    np.testing.assert_array_equal(states.numpy(), np.stack(expected))
    vector.close()
