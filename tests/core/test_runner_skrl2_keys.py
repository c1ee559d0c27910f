"""skrl 2.x's agent key names (Isaac Lab 3.0's configs) read as skrl 1.4's by the Runner: each rename, value clipping
turned on by ``value_clip > 0`` in a 2.x config, 2.x's state preprocessor (MAPPO's shared one, the others' privileged
states' one), AMP's reward scales, and a config that gives both spellings of one key with different values refused
with both keys named."""

import pytest

from skrl_like.core.agents.amp import AMP_DEFAULT_CONFIG
from skrl_like.core.agents.dqn import DQN_DEFAULT_CONFIG
from skrl_like.core.agents.ppo import PPO_DEFAULT_CONFIG
from skrl_like.core.agents.sac import SAC_DEFAULT_CONFIG
from skrl_like.core.agents.td3 import TD3_DEFAULT_CONFIG
from skrl_like.core.agents.trpo import TRPO_DEFAULT_CONFIG
from skrl_like.core.multi_agents.ippo import MAPPO_DEFAULT_CONFIG
from skrl_like.core.runner import RunnerConfigError, apply_overrides, translate_skrl2_keys


def test_each_skrl2_name_becomes_the_skrl14_one():
    agent = {
        "class": "PPO",
        "gae_lambda": 0.9,
        "observation_preprocessor": "RunningStandardScaler",
        "observation_preprocessor_kwargs": None,
        "mixed_precision": True,
    }
    assert translate_skrl2_keys(agent, PPO_DEFAULT_CONFIG) == {
        "class": "PPO",
        "lambda": 0.9,
        "state_preprocessor": "RunningStandardScaler",
        "state_preprocessor_kwargs": None,
        "mixed_precision": True,
        "clip_predicted_values": True,  # value_clip's default, 0.2, is > 0
    }
    assert agent["gae_lambda"] == 0.9  # the caller's dict is not changed


@pytest.mark.parametrize("value_clip, clipped", [(0.3, True), (0.0, False)])
def test_in_a_skrl2_config_value_clip_above_zero_turns_clipping_on(value_clip, clipped):
    translated = translate_skrl2_keys({"gae_lambda": 0.95, "value_clip": value_clip}, PPO_DEFAULT_CONFIG)
    assert translated["clip_predicted_values"] is clipped and translated["value_clip"] == value_clip


def test_a_skrl14_config_keeps_its_meaning():
    """Isaac Lab 2.3's files: no 2.x key, so value_clip alone does not turn clipping on (skrl 1.4's default)."""
    agent = {"lambda": 0.95, "state_preprocessor": "RunningStandardScaler", "value_clip": 0.2}
    assert translate_skrl2_keys(agent, PPO_DEFAULT_CONFIG) == agent
    explicit = {"gae_lambda": 0.95, "value_clip": 0.2, "clip_predicted_values": False}
    assert translate_skrl2_keys(explicit, PPO_DEFAULT_CONFIG)["clip_predicted_values"] is False


def test_both_spellings_with_the_same_value_are_one_key():
    agent = {"gae_lambda": 0.9, "lambda": 0.9, "observation_preprocessor": "runningstandardscaler"}
    agent.update(state_preprocessor="RunningStandardScaler", state_preprocessor_kwargs={})
    translated = translate_skrl2_keys(agent, PPO_DEFAULT_CONFIG)
    assert translated["lambda"] == 0.9 and "gae_lambda" not in translated
    assert translated["state_preprocessor"] == "runningstandardscaler" and "observation_preprocessor" not in translated


@pytest.mark.parametrize(
    "agent, names",
    [
        ({"gae_lambda": 0.9, "lambda": 0.95}, ("agent.gae_lambda (0.9, skrl 2.x)", "agent.lambda (0.95, skrl 1.4)")),
        (
            {"amp_observation_preprocessor": "RunningStandardScaler", "amp_state_preprocessor": None},
            ("agent.amp_observation_preprocessor", "agent.amp_state_preprocessor"),
        ),
        (
            {"task_reward_scale": 0.5, "task_reward_weight": 0.0},
            ("agent.task_reward_scale", "agent.task_reward_weight"),
        ),
    ],
)
def test_both_spellings_with_different_values_are_refused_naming_both(agent, names):
    with pytest.raises(RunnerConfigError, match="keep one of them") as error:
        translate_skrl2_keys(agent, AMP_DEFAULT_CONFIG)
    assert all(name in str(error.value) for name in names)


def test_skrl2s_state_preprocessor_beside_the_observation_one_is_the_privileged_states_one():
    both = {
        "observation_preprocessor": None,
        "state_preprocessor": "RunningStandardScaler",
        "state_preprocessor_kwargs": None,
    }
    for defaults in (PPO_DEFAULT_CONFIG, SAC_DEFAULT_CONFIG):  # an asymmetric value model or critics
        translated = translate_skrl2_keys(both, defaults)
        assert translated["state_preprocessor"] is None  # the observations'
        assert translated["privileged_state_preprocessor"] == "RunningStandardScaler"
        assert translated["privileged_state_preprocessor_kwargs"] is None
    # skrl 1.4's spelling: state_preprocessor is the observations' (no privileged one)
    assert translate_skrl2_keys({"state_preprocessor": "RunningStandardScaler"}, PPO_DEFAULT_CONFIG) == {
        "state_preprocessor": "RunningStandardScaler"
    }
    with pytest.raises(RunnerConfigError, match="agent.state_preprocessor.*agent.privileged_state_preprocessor"):
        translate_skrl2_keys({**both, "privileged_state_preprocessor": None}, PPO_DEFAULT_CONFIG)


def test_skrl2s_state_preprocessor_of_an_agent_without_privileged_states_must_be_none_or_the_observations_one():
    same = {"observation_preprocessor": "RunningStandardScaler", "state_preprocessor": "RunningStandardScaler"}
    assert translate_skrl2_keys(same, DQN_DEFAULT_CONFIG)["state_preprocessor"] == "RunningStandardScaler"
    none = {"observation_preprocessor": "RunningStandardScaler", "state_preprocessor": None}
    assert translate_skrl2_keys(none, DQN_DEFAULT_CONFIG)["state_preprocessor"] == "RunningStandardScaler"
    different = {"observation_preprocessor": None, "state_preprocessor": "RunningStandardScaler"}
    with pytest.raises(RunnerConfigError, match="no model that reads the privileged states.*remove agent.state_pre"):
        translate_skrl2_keys(different, DQN_DEFAULT_CONFIG)


def test_mappos_skrl2_state_preprocessor_is_its_shared_one():
    agent = {
        "observation_preprocessor": "RunningStandardScaler",
        "state_preprocessor": "RunningStandardScaler",
        "state_preprocessor_kwargs": None,
    }
    translated = translate_skrl2_keys(agent, MAPPO_DEFAULT_CONFIG)
    assert translated["state_preprocessor"] == "RunningStandardScaler"
    assert translated["shared_state_preprocessor"] == "RunningStandardScaler"
    assert translated["shared_state_preprocessor_kwargs"] is None
    with pytest.raises(RunnerConfigError, match="agent.state_preprocessor.*agent.shared_state_preprocessor"):
        translate_skrl2_keys({**agent, "shared_state_preprocessor": None}, MAPPO_DEFAULT_CONFIG)


def test_amps_style_reward_scale_is_weight_times_discriminator_scale():
    translated = translate_skrl2_keys({"style_reward_scale": 2.0, "task_reward_scale": 0.3}, AMP_DEFAULT_CONFIG)
    assert translated["style_reward_weight"] == 2.0 and translated["discriminator_reward_scale"] == 1.0
    assert translated["task_reward_weight"] == 0.3 and "style_reward_scale" not in translated
    agreeing = {"style_reward_scale": 2.0, "style_reward_weight": 1.0}  # 1.0 * the default scale 2 == 2.0
    assert translate_skrl2_keys(agreeing, AMP_DEFAULT_CONFIG)["style_reward_weight"] == 1.0
    with pytest.raises(RunnerConfigError, match="agent.style_reward_scale .* agent.style_reward_weight"):
        translate_skrl2_keys({"style_reward_scale": 2.0, "style_reward_weight": 3.0}, AMP_DEFAULT_CONFIG)


def test_skrl2s_learning_rate_becomes_the_per_model_rates():
    assert translate_skrl2_keys({"learning_rate": [1e-3, 2e-3, 3e-3]}, SAC_DEFAULT_CONFIG) == {
        "actor_learning_rate": 1e-3,
        "critic_learning_rate": 2e-3,
        "entropy_learning_rate": 3e-3,
    }
    assert translate_skrl2_keys({"learning_rate": 5e-4}, TD3_DEFAULT_CONFIG) == {
        "actor_learning_rate": 5e-4,
        "critic_learning_rate": 5e-4,
    }
    assert translate_skrl2_keys({"learning_rate": 5e-4}, TRPO_DEFAULT_CONFIG) == {"value_learning_rate": 5e-4}
    with pytest.raises(RunnerConfigError, match="has 3 rates, but the agent has 2 models .* give one number or 2"):
        translate_skrl2_keys({"learning_rate": [1e-3, 1e-3, 1e-3]}, TD3_DEFAULT_CONFIG)
    with pytest.raises(RunnerConfigError, match=r"agent.learning_rate .* and agent.actor_learning_rate \(0.1"):
        translate_skrl2_keys({"learning_rate": 1e-3, "actor_learning_rate": 0.1}, TD3_DEFAULT_CONFIG)


def test_one_optimizer_takes_a_tuple_of_equal_rates_only():
    agent = {"learning_rate": [3e-4, 3e-4], "learning_rate_scheduler": ["KLAdaptiveLR", "KLAdaptiveLR"]}
    assert translate_skrl2_keys(agent, PPO_DEFAULT_CONFIG) == {
        "learning_rate": 3e-4,
        "learning_rate_scheduler": "KLAdaptiveLR",
    }
    with pytest.raises(
        RunnerConfigError,
        match=r"\[0.0003, 0.001\], skrl 2.x\); skrl_like's agents train their models with one optimizer",
    ):
        translate_skrl2_keys({"learning_rate": [3e-4, 1e-3]}, PPO_DEFAULT_CONFIG)
    with pytest.raises(RunnerConfigError, match="learning_rate_scheduler gives each model its own"):
        translate_skrl2_keys({"learning_rate_scheduler": ["KLAdaptiveLR", None]}, PPO_DEFAULT_CONFIG)


def test_skrl2s_exploration_noise_is_the_exploration_sections_at_a_constant_scale():
    agent = {"exploration_noise": "GaussianNoise", "exploration_noise_kwargs": {"mean": 0.0, "std": 0.1}}
    assert translate_skrl2_keys(agent, TD3_DEFAULT_CONFIG)["exploration"] == {
        "noise": "GaussianNoise",
        "noise_kwargs": {"mean": 0.0, "std": 0.1},
        "initial_scale": 1.0,
        "final_scale": 1.0,  # skrl 2.x without an exploration_scheduler: no decay
        "timesteps": None,
    }
    given = {**agent, "exploration": {"noise": "OrnsteinUhlenbeckNoise", "initial_scale": 0.5}}
    with pytest.raises(RunnerConfigError, match="agent.exploration_noise .* and agent.exploration.noise"):
        translate_skrl2_keys(given, TD3_DEFAULT_CONFIG)
    with pytest.raises(RunnerConfigError, match="exploration_scheduler .* Python code.*initial_scale, final_scale"):
        translate_skrl2_keys({"exploration_scheduler": "max(0.05, 1 - timestep / timesteps)"}, TD3_DEFAULT_CONFIG)


def test_an_override_in_one_spelling_replaces_the_files_other_spelling():
    cfg = {"agent": {"class": "PPO", "lambda": 0.95, "state_preprocessor": "RunningStandardScaler"}}
    assert apply_overrides(cfg, {"gae_lambda": 0.9})["agent"] == {
        "class": "PPO",
        "gae_lambda": 0.9,
        "state_preprocessor": "RunningStandardScaler",
    }
    skrl2 = {"agent": {"class": "PPO", "gae_lambda": 0.95, "observation_preprocessor": "RunningStandardScaler"}}
    overridden = apply_overrides(skrl2, {"agent": {"lambda": 0.8, "observation_preprocessor": None}})["agent"]
    assert overridden == {"class": "PPO", "lambda": 0.8, "observation_preprocessor": None}


def test_per_agent_values_of_ippo_and_mappo_are_read_per_agent():
    agent = {
        "gae_lambda": {"a": 0.9, "b": 0.8},
        "value_clip": {"a": 0.2, "b": 0.0},
        "learning_rate": {"a": [1e-3, 1e-3]},
    }
    assert translate_skrl2_keys(agent, MAPPO_DEFAULT_CONFIG) == {
        "lambda": {"a": 0.9, "b": 0.8},
        "value_clip": {"a": 0.2, "b": 0.0},
        "clip_predicted_values": {"a": True, "b": False},
        "learning_rate": {"a": 1e-3},
    }
    with pytest.raises(RunnerConfigError, match=r"agent.learning_rate.b gives each model its own"):
        translate_skrl2_keys({"gae_lambda": 0.9, "learning_rate": {"b": [1e-3, 2e-3]}}, MAPPO_DEFAULT_CONFIG)
