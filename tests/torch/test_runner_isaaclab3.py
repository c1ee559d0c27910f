"""Isaac Lab 3.0's skrl configs (skrl 2.x key names) through the torch Runner on the Isaac Lab stand-in env: built
with skrl 1.4's meaning of each key and trained a few steps; both spellings with different values refused."""

import copy
import logging

import gymnasium
import pytest
import torch

from skrl_like.core.runner import RunnerConfigError
from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.utils.runner import Runner
from tests.isaaclab_helpers import MultiAgentEnv

# the layout of Isaac Lab 3.0's skrl configs (isaaclab_tasks/.../agents/skrl_ppo_cfg.yaml, skrl >= 2.1): gae_lambda,
# observation_preprocessor, value_clip alone deciding value clipping, mixed_precision; small sizes
ISAAC_LAB_3_PPO_CFG = {
    "seed": 42,
    "models": {
        "separate": False,
        "policy": {
            "class": "GaussianMixin",
            "clip_actions": False,
            "clip_log_std": True,
            "min_log_std": -20.0,
            "max_log_std": 2.0,
            "initial_log_std": 0.0,
            "network": [{"name": "net", "input": "OBSERVATIONS", "layers": [32, 32], "activations": "elu"}],
            "output": "ACTIONS",
        },
        "value": {
            "class": "DeterministicMixin",
            "clip_actions": False,
            "network": [{"name": "net", "input": "OBSERVATIONS", "layers": [32, 32], "activations": "elu"}],
            "output": "ONE",
        },
    },
    "memory": {"class": "RandomMemory", "memory_size": -1},
    "agent": {
        "class": "PPO",
        "rollouts": 16,
        "learning_epochs": 2,
        "mini_batches": 2,
        "discount_factor": 0.99,
        "gae_lambda": 0.9,
        "learning_rate": 3.0e-04,
        "learning_rate_scheduler": "KLAdaptiveLR",
        "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008},
        "observation_preprocessor": "RunningStandardScaler",
        "observation_preprocessor_kwargs": None,
        "value_preprocessor": "RunningStandardScaler",
        "value_preprocessor_kwargs": None,
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 1.0,
        "ratio_clip": 0.2,
        "value_clip": 0.2,
        "entropy_loss_scale": 0.0,
        "value_loss_scale": 1.0,
        "kl_threshold": 0.0,
        "rewards_shaper_scale": 0.6,
        "time_limit_bootstrap": False,
        "mixed_precision": False,
        "experiment": {"directory": "", "experiment_name": "", "write_interval": "auto", "checkpoint_interval": 0},
    },
    "trainer": {
        "class": "SequentialTrainer",
        "timesteps": 64,
        "environment_info": "log",
        "headless": True,
        "disable_progressbar": True,
        "close_environment_at_exit": False,
    },
}


def _config(tmp_path, **agent):
    cfg = copy.deepcopy(ISAAC_LAB_3_PPO_CFG)
    cfg["agent"]["experiment"]["directory"] = str(tmp_path)
    cfg["agent"].update(agent)
    return cfg


def _stand_in():
    return wrap_env(IsaacLabStandInEnv(num_envs=8, state_size=64), wrapper="isaaclab", verbose=False)


def test_an_isaac_lab_3_config_builds_with_skrl14s_meaning_and_trains(tmp_path):
    runner = Runner(_stand_in(), _config(tmp_path))
    agent = runner.agent
    assert isinstance(agent, PPO) and agent.models["policy"] is agent.models["value"]
    assert agent.cfg["lambda"] == 0.9 and "gae_lambda" not in agent.cfg
    assert agent.cfg["clip_predicted_values"] is True  # value_clip: 0.2 > 0 in a skrl 2.x config
    assert agent.cfg["state_preprocessor"] is RunningStandardScaler and "observation_preprocessor" not in agent.cfg
    assert agent._state_preprocessor.running_mean.shape == (60,)  # the policy group
    before = [parameter.detach().clone() for parameter in agent.models["policy"].parameters()]
    runner.run("train")
    after = list(agent.models["policy"].parameters())
    assert all(torch.isfinite(parameter).all() for parameter in after)
    assert any(not torch.equal(b, a) for b, a in zip(before, after))  # 4 updates ran


def test_value_clip_zero_turns_clipping_off(tmp_path):
    agent = Runner(_stand_in(), _config(tmp_path, value_clip=0.0)).agent
    assert agent.cfg["clip_predicted_values"] is False


def test_both_spellings_of_lambda_with_different_values_are_refused(tmp_path):
    with pytest.raises(RunnerConfigError, match=r"agent\.gae_lambda \(0\.9, skrl 2\.x\) and agent\.lambda \(0\.95"):
        Runner(_stand_in(), _config(tmp_path, **{"lambda": 0.95}))


def test_skrl2s_state_preprocessor_without_a_model_reading_the_states_is_not_built_with_a_warning(tmp_path, caplog):
    # the states' preprocessor beside the observations' one, for a shared model on the observations
    cfg = _config(tmp_path, observation_preprocessor=None, state_preprocessor="RunningStandardScaler")
    with caplog.at_level(logging.WARNING):
        agent = Runner(_stand_in(), cfg).agent
    assert agent.cfg["state_preprocessor"] is None
    assert agent.cfg["privileged_state_preprocessor"] is RunningStandardScaler
    assert "privileged_state_preprocessor" not in agent.checkpoint_modules and "no model reads them" in caplog.text


def test_the_same_config_in_skrl14s_names_builds_the_same_agent(tmp_path):
    """Isaac Lab 2.3's spelling of the same file: the agents' configs are equal, key for key."""
    cfg_14 = _config(tmp_path)
    for key_2x, key_14 in (("gae_lambda", "lambda"), ("observation_preprocessor", "state_preprocessor")):
        cfg_14["agent"][key_14] = cfg_14["agent"].pop(key_2x)
    cfg_14["agent"]["state_preprocessor_kwargs"] = cfg_14["agent"].pop("observation_preprocessor_kwargs")
    cfg_14["agent"]["clip_predicted_values"] = True
    skrl2 = Runner(_stand_in(), _config(tmp_path)).agent.cfg
    skrl14 = Runner(_stand_in(), cfg_14).agent.cfg
    assert skrl2.keys() == skrl14.keys()
    assert all(skrl2[key] == skrl14[key] for key in skrl2 if key != "rewards_shaper")


def test_a_skrl2_td3_section_builds_its_noise_and_per_model_rates(tmp_path):
    network = [{"name": "net", "input": "OBSERVATIONS_ACTIONS", "layers": [16], "activations": "relu"}]
    critic = {"class": "DeterministicMixin", "network": network, "output": "ONE"}
    actor_network = [{"name": "net", "input": "OBSERVATIONS", "layers": [16], "activations": "relu"}]
    actor = {"class": "DeterministicMixin", "network": actor_network, "output": "tanh(ACTIONS)"}
    models = {"separate": True, "policy": actor, "target_policy": actor}
    models.update({role: critic for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2")})
    cfg = {
        "models": models,
        "memory": {"class": "RandomMemory", "memory_size": 64},
        "agent": {
            "class": "TD3",
            "batch_size": 8,
            "learning_rate": [1e-3, 2e-3],
            "observation_preprocessor": "RunningStandardScaler",
            "exploration_noise": "GaussianNoise",
            "exploration_noise_kwargs": {"mean": 0.0, "std": 0.1},
            "smooth_regularization_noise": "GaussianNoise",
            "smooth_regularization_noise_kwargs": {"mean": 0.0, "std": 0.2},
            "experiment": {"directory": str(tmp_path), "write_interval": 0, "checkpoint_interval": 0},
        },
        "trainer": {**ISAAC_LAB_3_PPO_CFG["trainer"], "timesteps": 16},
    }
    runner = Runner(_stand_in(), cfg)
    agent = runner.agent
    assert (agent.cfg["actor_learning_rate"], agent.cfg["critic_learning_rate"]) == (1e-3, 2e-3)
    assert agent.policy_optimizer.param_groups[0]["lr"] == 1e-3
    assert agent.critic_optimizer.param_groups[0]["lr"] == 2e-3
    noise = agent.cfg["exploration"]["noise"]
    assert type(noise).__name__ == "GaussianNoise" and agent.cfg["exploration"]["final_scale"] == 1.0
    runner.run("train")


def test_a_skrl2_mappo_section_gets_its_state_preprocessor_as_the_shared_one(tmp_path):
    """Isaac Lab 3.0's MAPPO files: observation_preprocessor per agent, state_preprocessor for the shared state()."""
    network = [{"name": "net", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"}]
    cfg = {
        "models": {
            "separate": True,
            "policy": {"class": "GaussianMixin", "network": network, "output": "ACTIONS"},
            "value": {"class": "DeterministicMixin", "network": network, "output": "ONE"},
        },
        "memory": {"class": "RandomMemory", "memory_size": -1},
        "agent": {
            "class": "MAPPO",
            "rollouts": 4,
            "learning_epochs": 1,
            "mini_batches": 1,
            "gae_lambda": 0.9,
            "observation_preprocessor": "RunningStandardScaler",
            "observation_preprocessor_kwargs": None,
            "state_preprocessor": "RunningStandardScaler",
            "state_preprocessor_kwargs": None,
            "experiment": {"directory": str(tmp_path), "write_interval": 0, "checkpoint_interval": 0},
        },
        "trainer": {**ISAAC_LAB_3_PPO_CFG["trainer"], "timesteps": 8},
    }

    class BoxActions(MultiAgentEnv):
        def __init__(self):
            super().__init__(num_envs=4)
            self.action_spaces = {"a": gymnasium.spaces.Box(-1, 1, (2,)), "b": gymnasium.spaces.Box(-1, 1, (1,))}

    env = BoxActions()
    runner = Runner(wrap_env(env, wrapper="isaaclab", verbose=False), cfg)
    agent = runner.agent
    assert agent.cfg["lambda"] == 0.9
    assert agent.cfg["state_preprocessor"] is agent.cfg["shared_state_preprocessor"] is RunningStandardScaler
    assert agent.cfg["state_preprocessor_kwargs"]["a"]["size"] == env.observation_spaces["a"]
    assert agent.cfg["shared_state_preprocessor_kwargs"]["a"]["size"] == env.state_space  # the env's state()
    runner.run("train")
