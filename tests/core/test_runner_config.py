"""The Runner's backend-neutral half: the layout checks and their one-line errors (with close matches), the strict
YAML reader, and the command line's overrides."""

import pytest

from skrl_like.core.runner import (
    RunnerConfigError,
    RunnerCore,
    apply_overrides,
    check_config,
    component_key,
    read_yaml,
)

NETWORK = [{"name": "net", "input": "OBSERVATIONS", "layers": [8], "activations": "tanh"}]


def config(**sections):
    cfg = {
        "models": {"policy": {"class": "CategoricalMixin", "network": NETWORK, "output": "ACTIONS"}},
        "agent": {"class": "PPO"},
    }
    cfg.update(sections)
    return cfg


def test_a_valid_layout_passes():
    check_config(config(memory={"class": "RandomMemory", "memory_size": -1}, trainer={"class": "SequentialTrainer"}))


@pytest.mark.parametrize(
    "cfg, message",
    [
        ([], "must be a dict, got list"),
        (config(trainr={}), "Unknown section 'trainr' in the Runner configuration. Did you mean 'trainer'?"),
        ({"agent": {"class": "PPO"}}, "needs a 'models' section"),
        (config(agent={"rollouts": 16}), "agent.class is missing: name the algorithm, one of A2C, A2C_RNN, AMP, CEM"),
        (config(agent={"class": "PPOO"}), "Unknown agent 'PPOO' in agent.class. Did you mean 'PPO'?"),
        (config(models={"separate": True}), "defines no model"),
        (config(models={"policy": {"network": NETWORK}}), "models.policy must be a mapping with a 'class'"),
        (
            config(models={"policy": {"class": "GausianMixin"}}),
            "Unknown model class 'GausianMixin' in models.policy.class. Did you mean 'GaussianMixin'?",
        ),
        (config(memory={"class": "ReplayMemory"}), "Unknown memory 'ReplayMemory' in memory.class"),
        (config(trainer={"class": "ParallelTrainer"}), "Unknown trainer 'ParallelTrainer' in trainer.class"),
        (
            config(agent={"class": "PPO", "state_preprocessor": "RunningStandardScalar"}),
            "Unknown class 'RunningStandardScalar' in agent.state_preprocessor. Did you mean 'RunningStandardScaler'?",
        ),
        (
            config(agent={"class": "TD3", "exploration": {"noise": "GaussNoise"}}),
            "in agent.exploration.noise. Did you mean 'GaussianNoise'?",
        ),
        (config(memory=[1]), "The 'memory' section must be a mapping, got list"),
    ],
)
def test_layout_errors_name_the_entry(cfg, message):
    with pytest.raises(RunnerConfigError) as error:
        check_config(cfg)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_component_names_ignore_case_dashes_and_underscores():
    assert component_key("Q-learning") == component_key("Q_LEARNING") == "qlearning"
    check_config(config(agent={"class": "q-learning"}))


def test_read_yaml_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  class: PPO\n  rollouts: [16\n")
    with pytest.raises(RunnerConfigError, match=r"'.*bad.yaml' is not valid YAML \(line 4, column 1\)"):
        read_yaml(str(bad))
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("42\n")
    with pytest.raises(RunnerConfigError, match="holds a int, not a mapping"):
        read_yaml(str(scalar))
    with pytest.raises(RunnerConfigError, match="Cannot read the configuration file"):
        read_yaml(str(tmp_path / "missing.yaml"))
    # no Python objects from YAML tags
    tagged = tmp_path / "tagged.yaml"
    tagged.write_text("agent: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(RunnerConfigError, match="is not valid YAML"):
        read_yaml(str(tagged))


def test_load_cfg_from_yaml_logs_and_returns_an_empty_dict(tmp_path, caplog):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1\n")
    assert RunnerCore.load_cfg_from_yaml(str(bad)) == {}
    assert "is not valid YAML" in caplog.text


def test_overrides_merge_into_sections_or_the_agent():
    cfg = {"agent": {"class": "PPO", "experiment": {"directory": "runs", "write_interval": 10}}, "trainer": {}}
    merged = apply_overrides(
        cfg, {"learning_rate": 0.01, "experiment": {"write_interval": 5}, "trainer": {"timesteps": 7}, "seed": 3}
    )
    assert merged == {
        "agent": {"class": "PPO", "learning_rate": 0.01, "experiment": {"directory": "runs", "write_interval": 5}},
        "trainer": {"timesteps": 7},
        "seed": 3,
    }
    assert cfg["agent"]["experiment"]["write_interval"] == 10  # not modified
