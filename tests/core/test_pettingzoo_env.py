"""The PettingZoo wrapper's shared behaviour (skrl_like.core.envs.pettingzoo_env), through each backend's wrapper."""

import importlib

import numpy as np
import pytest
from gymnasium import spaces


class NonFiniteParallelEnv:
    """The PettingZoo parallel API, duck-typed: agent ``first`` observes NaN at step ``nan_at_step`` (0: at reset),
    agent ``second`` is rewarded ``inf`` at step ``inf_at_step``."""

    possible_agents = agents = ["first", "second"]
    observation_spaces = {"first": spaces.Box(-1, 1, (2,), np.float32), "second": spaces.Discrete(5)}
    action_spaces = {"first": spaces.Discrete(3), "second": spaces.Discrete(3)}
    state_space = spaces.Box(-1, 1, (3,), np.float32)

    def __init__(self, nan_at_step=None, inf_at_step=None):
        self.nan_at_step, self.inf_at_step, self.steps = nan_at_step, inf_at_step, 0

    def _observations(self):
        first = np.full(2, np.nan if self.steps == self.nan_at_step else 0.5, np.float32)
        return {"first": first, "second": 1}

    def reset(self):
        self.steps = 0
        return self._observations(), {"first": {}, "second": {}}

    def step(self, actions):
        self.steps += 1
        rewards = {"first": 1.0, "second": np.inf if self.steps == self.inf_at_step else 1.0}
        done = {"first": False, "second": False}
        return self._observations(), rewards, done, dict(done), {}


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_non_finite_values_raise_a_clear_error_naming_the_agent_and_step(backend):
    PettingZooWrapper = importlib.import_module(f"skrl_like.{backend}.envs.wrappers").PettingZooWrapper
    actions = {"first": np.array([[1]]), "second": np.array([[2]])}
    with pytest.raises(ValueError, match=r"non-finite \(NaN/inf\) observations for agent 'first' at reset"):
        PettingZooWrapper(NonFiniteParallelEnv(nan_at_step=0)).reset()
    env = PettingZooWrapper(NonFiniteParallelEnv(nan_at_step=2))
    env.reset()
    env.step(actions)
    with pytest.raises(ValueError, match=r"observations for agent 'first' at step 2.*check_finite=False"):
        env.step(actions)
    env = PettingZooWrapper(NonFiniteParallelEnv(inf_at_step=1))
    env.reset()
    with pytest.raises(ValueError, match=r"NonFiniteParallelEnv returned non-finite \(NaN/inf\) rewards for agent "):
        env.step(actions)

    named = NonFiniteParallelEnv(nan_at_step=0)
    named.metadata = {"name": "pistonball_v6"}  # PettingZoo envs name themselves in their metadata
    with pytest.raises(ValueError, match=r"environment pistonball_v6 returned non-finite"):
        PettingZooWrapper(named).reset()

    unchecked = PettingZooWrapper(NonFiniteParallelEnv(nan_at_step=1, inf_at_step=1), check_finite=False)
    unchecked.reset()
    observations, rewards, *_ = unchecked.step(actions)
    assert np.isnan(np.asarray(observations["first"])).all() and np.isinf(np.asarray(rewards["second"])).all()


class SpaceMethodsParallelEnv:
    """A parallel env that gives its spaces only through PettingZoo's per-agent methods (no space dicts)."""

    possible_agents = agents = ["first"]

    def observation_space(self, agent):
        return spaces.Box(-1, 1, (2,), np.float32)

    def action_space(self, agent):
        return spaces.Discrete(3)


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_spaces_come_from_the_per_agent_methods_when_the_env_has_no_space_dicts(backend):
    PettingZooWrapper = importlib.import_module(f"skrl_like.{backend}.envs.wrappers").PettingZooWrapper
    env = PettingZooWrapper(SpaceMethodsParallelEnv())
    assert env.observation_spaces == {"first": spaces.Box(-1, 1, (2,), np.float32)}
    assert env.action_space("first") == spaces.Discrete(3)


class WrongShapeParallelEnv(NonFiniteParallelEnv):
    """Agent ``first`` observes 3 values where its space has 2, from step 1 on."""

    def _observations(self):
        observations = super()._observations()
        if self.steps >= 1:
            observations["first"] = np.zeros(3, np.float32)
        return observations


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_observations_that_do_not_fit_an_agents_space_are_named(backend):
    PettingZooWrapper = importlib.import_module(f"skrl_like.{backend}.envs.wrappers").PettingZooWrapper
    env = PettingZooWrapper(WrongShapeParallelEnv())
    env.reset()
    with pytest.raises(
        ValueError, match=r"observations for agent 'first' of shape \(3,\) where \(2,\) was expected at step 1"
    ):
        env.step({"first": np.array([[1]]), "second": np.array([[2]])})
