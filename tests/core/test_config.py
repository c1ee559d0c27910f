import pytest

from skrl_like.core.config import merge_config

DEFAULT = {
    "rollouts": 16,
    "learning_rate": 1e-3,
    "experiment": {"directory": "", "write_interval": "auto"},
    "kwargs": {},
}


def test_merge_is_a_shallow_update_that_leaves_the_default_untouched():
    merged = merge_config(DEFAULT, {"rollouts": 32, "experiment": {"directory": "runs/x"}}, "PPO cfg")
    assert merged["rollouts"] == 32
    assert merged["experiment"] == {"directory": "runs/x"}  # a nested dict replaces the default one (skrl)
    assert DEFAULT["rollouts"] == 16 and DEFAULT["experiment"]["directory"] == ""
    merged["kwargs"]["a"] = 1
    assert DEFAULT["kwargs"] == {}  # nested dicts are copies


def test_unknown_key_names_the_close_match():
    with pytest.raises(ValueError, match=r"Unknown key 'learning_rat' in PPO cfg\. Did you mean 'learning_rate'\?"):
        merge_config(DEFAULT, {"learning_rat": 1e-4}, "PPO cfg")


def test_unknown_nested_experiment_key_is_reported_with_its_path():
    with pytest.raises(ValueError, match=r"Unknown key 'write_intervall' in PPO cfg\['experiment'\].*'write_interval'"):
        merge_config(DEFAULT, {"experiment": {"write_intervall": 10}}, "PPO cfg")


def test_free_form_kwargs_dicts_are_not_validated():
    assert merge_config(DEFAULT, {"kwargs": {"anything": 1}}, "x")["kwargs"] == {"anything": 1}


def test_non_mapping_cfg_is_a_type_error():
    with pytest.raises(TypeError, match="PPO cfg must be a dict"):
        merge_config(DEFAULT, [("rollouts", 1)], "PPO cfg")


def test_values_that_are_not_dicts_are_shared_not_copied():
    marker = object()
    assert merge_config({"device": None}, {"device": marker}, "x")["device"] is marker
