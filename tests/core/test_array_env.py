"""The NumPy-env wrappers' shared behaviour (skrl_like.core.envs.array_env) through each backend's ``wrap_env``:
the NaN/inf check's fix, batched gymnasium envs that declare ``num_envs``, observations checked against the space."""

import importlib
import re

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from tests.core.test_trainer import QUIET, Backend

BACKENDS = ["torch", "jax"]


def wrap_env(backend, env, **kwargs):
    return importlib.import_module(f"skrl_like.{backend}.envs.wrappers").wrap_env(env, verbose=False, **kwargs)


def to_numpy(array):
    return array.numpy() if hasattr(array, "numpy") and not isinstance(array, np.ndarray) else np.asarray(array)


def actions(backend, array):
    if backend == "torch":
        import torch

        return torch.as_tensor(array)
    return np.asarray(array)


class InfiniteObservationEnv(gymnasium.Env):
    """Observes ``inf`` at every step (a legitimate value for some envs: a lidar that sees nothing)."""

    observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
    action_space = spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.array([np.inf, 0.0], np.float32), 0.0, False, False, {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_non_finite_message_names_a_fix_that_wrap_env_takes(backend):
    checked = wrap_env(backend, InfiniteObservationEnv(), wrapper="gymnasium")
    checked.reset()
    with pytest.raises(ValueError, match=r"non-finite .* pass check_finite=False to wrap_env") as error:
        checked.step(actions(backend, np.zeros((1, 1), np.float32)))
    assert "InfiniteObservationEnv" in str(error.value)

    unchecked = wrap_env(backend, InfiniteObservationEnv(), wrapper="gymnasium", check_finite=False)
    assert unchecked.check_finite is False
    unchecked.reset()
    next_states, *_ = unchecked.step(actions(backend, np.zeros((1, 1), np.float32)))
    assert to_numpy(next_states).tolist() == [[np.inf, 0.0]]


class BatchedEnv(gymnasium.Env):
    """A ``gymnasium.Env`` that simulates ``num_envs`` copies itself (as many simulators do): ``(4, 5)`` observations,
    ``(4,)`` rewards, ``(4, 3)`` actions, spaces of one copy."""

    num_envs = 4
    observation_space = spaces.Box(-1, 1, (5,), np.float32)
    action_space = spaces.Box(-1, 1, (3,), np.float32)

    def __init__(self):
        self.actions, self.resets = [], 0

    def reset(self, *, seed=None, options=None):
        self.resets += 1
        return np.zeros((4, 5), np.float32), {}

    def step(self, actions):
        self.actions.append(actions)
        observations = np.tile(np.arange(4, dtype=np.float32)[:, None], (1, 5))
        return observations, np.arange(4.0), np.array([0, 1, 0, 0], bool), np.zeros(4, bool), {}


class BatchedDiscreteEnv(BatchedEnv):
    action_space = spaces.Discrete(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batched_gymnasium_env_is_num_envs_environments(backend):
    env = BatchedEnv()
    wrapped = wrap_env(backend, env, wrapper="gymnasium")
    assert wrapped.num_envs == 4
    assert wrapped.observation_space == env.observation_space and wrapped.action_space == env.action_space
    states, _ = wrapped.reset()
    assert to_numpy(states).shape == (4, 5)
    given = np.arange(12, dtype=np.float32).reshape(4, 3) / 12
    next_states, rewards, terminated, truncated, _ = wrapped.step(actions(backend, given))
    assert env.actions[0].shape == (4, 3) and env.actions[0].dtype == np.float32
    np.testing.assert_array_equal(env.actions[0], given)
    np.testing.assert_array_equal(to_numpy(next_states), np.tile(np.arange(4.0)[:, None], (1, 5)))
    np.testing.assert_array_equal(to_numpy(rewards), [[0.0], [1.0], [2.0], [3.0]])
    np.testing.assert_array_equal(to_numpy(terminated).astype(bool), [[False], [True], [False], [False]])
    assert to_numpy(truncated).shape == (4, 1)
    # it resets its copies itself, as a vector env does: a second reset (e.g. before evaluation) continues
    np.testing.assert_array_equal(to_numpy(wrapped.reset()[0]), to_numpy(next_states))
    assert env.resets == 1

    discrete = BatchedDiscreteEnv()
    wrapped = wrap_env(backend, discrete, wrapper="gymnasium")
    wrapped.reset()
    wrapped.step(actions(backend, np.array([[0], [2], [1], [2]])))
    assert discrete.actions[0].tolist() == [0, 2, 1, 2]
    with pytest.raises(ValueError, match=r"actions of shape \(1, 3\) do not fit .* give an array of shape \(4, 3\)"):
        wrap_env(backend, BatchedEnv(), wrapper="gymnasium").step(actions(backend, np.zeros((1, 3), np.float32)))


@pytest.mark.parametrize("name", BACKENDS)
def test_a_batched_env_trains_an_agent_on_its_sub_environments(name):
    backend = Backend(name)
    env = wrap_env(name, BatchedDiscreteEnv(), wrapper="gymnasium")
    agent = backend.agent(env, rollouts=8)  # a PPO agent with a memory of env.num_envs columns
    backend.trainers.SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    assert backend.to_numpy(agent.memory.get_tensor_by_name("states")).shape == (8, 4, 5)
    assert backend.to_numpy(agent.memory.get_tensor_by_name("rewards"))[-1].ravel().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1


class WrongObservationEnv(gymnasium.Env):
    """Declares ``observation_space`` but returns ``observation`` (at reset, or from step ``at_step`` on)."""

    action_space = spaces.Discrete(2)

    def __init__(self, observation_space, observation, at_step=0, num_envs=None):
        self.observation_space, self.wrong, self.at_step, self.steps = observation_space, observation, at_step, 0
        if num_envs is not None:
            self.num_envs = num_envs
        self.batch = () if num_envs is None else (num_envs,)

    def _observation(self):
        if self.steps >= self.at_step:
            return self.wrong
        sample = self.observation_space.sample()
        return np.stack([sample] * self.batch[0]) if self.batch else sample

    def reset(self, *, seed=None, options=None):
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        self.steps += 1
        rewards = np.zeros(self.batch) if self.batch else 0.0
        done = np.zeros(self.batch, bool) if self.batch else False
        return self._observation(), rewards, done, done, {}


BOX = spaces.Box(-1, 1, (5,), np.float32)
WRONG_OBSERVATIONS = [
    # (space, wrong observation, num_envs, expected message)
    (BOX, np.zeros(6, np.float32), None, r"observations of shape \(6,\) where \(5,\) was expected"),
    (BOX, np.zeros((4, 6), np.float32), 4, r"of shape \(4, 6\) where \(4, 5\) was expected"),
    (BOX, np.zeros(5, np.float32), 4, r"of shape \(5,\) where \(4, 5\) was expected .*4 sub-environments, each Box"),
    (BOX, np.array(["a"] * 5), None, r"of dtype <U1 where a numeric dtype \(Box\) was expected"),
    (spaces.Discrete(3), 1.5, None, r"of dtype float64 where an integer dtype \(Discrete\) was expected"),
    (spaces.Dict({"a": BOX, "b": spaces.Discrete(2)}), {"a": np.zeros(5)}, None, r"without the key\(s\) \['b'\]"),
    (spaces.Dict({"a": BOX}), {"a": np.zeros(3)}, None, r"\['a'\] of shape \(3,\) where \(5,\) was expected"),
    (spaces.Tuple((BOX, BOX)), (np.zeros(5),), None, r"as a tuple of 1 values where a tuple of 2 parts"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "space, observation, num_envs, message",
    WRONG_OBSERVATIONS,
    ids=["size", "batched-size", "batched-unbatched", "str-dtype", "float-discrete", "dict-key", "dict-part", "tuple"],
)
def test_observations_that_do_not_fit_the_space_are_named_at_the_wrapper(
    backend, space, observation, num_envs, message
):
    at_reset = wrap_env(backend, WrongObservationEnv(space, observation, num_envs=num_envs), wrapper="gymnasium")
    with pytest.raises(ValueError, match=r"environment WrongObservationEnv returned observations .* at reset") as error:
        at_reset.reset()
    assert re.search(message, str(error.value)), str(error.value)
    assert "make the env return what its observation_space declares" in str(error.value)

    at_step = wrap_env(backend, WrongObservationEnv(space, observation, at_step=2, num_envs=num_envs))
    at_step.reset()
    batch = num_envs or 1
    at_step.step(actions(backend, np.zeros((batch, 1), np.int64)))
    with pytest.raises(ValueError, match=r"returned observations .* at step 2;") as error:
        at_step.step(actions(backend, np.zeros((batch, 1), np.int64)))
    assert re.search(message, str(error.value)), str(error.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_observations_that_fit_pass_with_any_numeric_dtype_and_a_leading_one(backend):
    for observation in (np.zeros((1, 5), np.float64), np.zeros(5, np.int64), [0.0] * 5, np.zeros(5, bool)):
        env = wrap_env(backend, WrongObservationEnv(BOX, observation), wrapper="gymnasium")
        assert to_numpy(env.reset()[0]).shape == (1, 5)
    discrete = wrap_env(backend, WrongObservationEnv(spaces.Discrete(3), np.int64(2)), wrapper="gymnasium")
    assert to_numpy(discrete.reset()[0]).tolist() == [[2]]
