"""Isaac Lab 3.0's skrl configs (skrl 2.x key names) through the JAX Runner on the Isaac Lab stand-in env (torch
tensors crossing by DLPack): built with skrl 1.4's meaning of each key and trained a few steps; conflicts refused."""

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like import config
from skrl_like.core.runner import RunnerConfigError
from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.utils.runner import Runner
from tests.torch.test_runner_isaaclab3 import ISAAC_LAB_3_PPO_CFG


@pytest.fixture(autouse=True)
def jax_backend():
    previous = config.jax.backend
    config.jax.backend = "jax"
    yield
    config.jax.backend = previous


def _config(tmp_path, **agent):
    cfg = copy.deepcopy(ISAAC_LAB_3_PPO_CFG)
    cfg["models"]["separate"] = True  # JAX has no shared model (separate: False builds two, with a warning)
    cfg["agent"]["experiment"]["directory"] = str(tmp_path)
    cfg["agent"].update(agent)
    return cfg


def _stand_in():
    return wrap_env(IsaacLabStandInEnv(num_envs=8, state_size=64), wrapper="isaaclab", verbose=False)


def test_an_isaac_lab_3_config_builds_with_skrl14s_meaning_and_trains(tmp_path):
    runner = Runner(_stand_in(), _config(tmp_path, mixed_precision=True))  # torch-only: dropped with a warning
    agent = runner.agent
    assert isinstance(agent, PPO)
    assert agent.cfg["lambda"] == 0.9 and "gae_lambda" not in agent.cfg
    assert agent.cfg["clip_predicted_values"] is True  # value_clip: 0.2 > 0 in a skrl 2.x config
    assert agent.cfg["state_preprocessor"] is RunningStandardScaler and "observation_preprocessor" not in agent.cfg
    before = jax.tree_util.tree_leaves(agent.models["policy"].state_dict.params)
    runner.run("train")
    after = jax.tree_util.tree_leaves(agent.models["policy"].state_dict.params)
    assert all(bool(jnp.isfinite(leaf).all()) for leaf in after)
    assert any(not np.array_equal(b, a) for b, a in zip(before, after))  # 4 updates ran


def test_both_spellings_of_lambda_with_different_values_are_refused(tmp_path):
    with pytest.raises(RunnerConfigError, match=r"agent\.gae_lambda \(0\.9, skrl 2\.x\) and agent\.lambda \(0\.95"):
        Runner(_stand_in(), _config(tmp_path, **{"lambda": 0.95}))
