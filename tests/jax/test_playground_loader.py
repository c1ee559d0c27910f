"""load_playground_env on a stand-in ``mujoco_playground.registry`` (no Playground needed): the task's config and
overrides, the command line's priority, the loading choices recorded for wrap_env, and the clear errors."""

import sys
import types

import pytest

from skrl_like.core.seeding import get_seed
from skrl_like.envs import load_playground_env
from skrl_like.jax.envs.wrappers import PlaygroundWrapper, wrap_env
from tests.brax_standin import PlaygroundPointMass


@pytest.fixture
def registry(monkeypatch):
    loads = []

    def load(name, config=None, config_overrides=None):
        loads.append((name, dict(config), config_overrides))
        return PlaygroundPointMass()

    registry = types.SimpleNamespace(
        ALL_ENVS=("PointMass", "NoLength"),
        get_default_config=lambda name: {"episode_length": 50, "action_repeat": 2} if name == "PointMass" else {},
        load=load,
        loads=loads,
    )
    monkeypatch.setitem(sys.modules, "mujoco_playground", types.SimpleNamespace(registry=registry))
    monkeypatch.setattr(sys, "argv", ["train.py"])
    return registry


def test_the_task_is_loaded_with_its_config_and_the_choices_reach_the_wrapper(registry):
    env = load_playground_env(task_name="PointMass", num_envs=3, cfg_overrides={"ctrl_dt": 0.02}, show_cfg=False)
    assert registry.loads == [("PointMass", {"episode_length": 50, "action_repeat": 2}, {"ctrl_dt": 0.02})]
    wrapped = wrap_env(env, verbose=False)
    assert isinstance(wrapped, PlaygroundWrapper)
    assert (wrapped.num_envs, wrapped.episode_length, wrapped._action_repeat, wrapped._full_reset) == (3, 50, 2, False)


def test_the_command_line_takes_priority(registry, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["train.py", "--task", "PointMass", "--num_envs", "5", "--episode_length", "9"])
    monkeypatch.setattr(sys, "argv", sys.argv + ["--full_reset", "--seed", "123"])
    env = load_playground_env(task_name="NoLength", num_envs=2, show_cfg=False)
    assert (env.num_envs, env.episode_length, env.action_repeat, env.full_reset) == (5, 9, 2, True)
    assert get_seed() == 123


def test_clear_errors(registry):
    with pytest.raises(ValueError, match="no task name: pass task_name="):
        load_playground_env(num_envs=2)
    with pytest.raises(ValueError, match="unknown task 'Cartpole'; MuJoCo Playground has: PointMass, NoLength"):
        load_playground_env(task_name="Cartpole", num_envs=2)
    with pytest.raises(ValueError, match="no number of environments: pass num_envs=N"):
        load_playground_env(task_name="PointMass")
    with pytest.raises(ValueError, match="'NoLength' has no default episode length: pass episode_length=N"):
        load_playground_env(task_name="NoLength", num_envs=2, show_cfg=False)
    with pytest.raises(NotImplementedError, match="domain randomization is not supported"):
        load_playground_env(task_name="PointMass", num_envs=2, randomization=True)
