"""Configs shared between backends: a JAX agent whose torch twin reads ``mixed_precision`` accepts the key with a
warning that it has no effect (Isaac Lab's JAX PPO files set it), and still rejects a misspelt key."""

import pytest

from skrl_like.cli import CommandLineError, _build, tuned_files
from skrl_like.core.runner import read_yaml

# the tuned files of the agents that torch gives ``mixed_precision`` (TRPO has none in either backend, as in skrl)
SHARED_KEY_FILES = [
    path
    for path in tuned_files()
    if read_yaml(path)["agent"]["class"]
    in ("PPO", "A2C", "RPO", "CEM", "DDPG", "TD3", "SAC", "DQN", "DDQN", "IPPO", "MAPPO")
]


def build(path, **agent_keys):
    cfg = read_yaml(path)
    cfg["agent"].update(agent_keys, experiment={"write_interval": 0, "checkpoint_interval": 0})
    return _build(cfg, "jax")


def test_every_agent_with_the_key_in_torch_is_covered():
    assert len(SHARED_KEY_FILES) == 12


@pytest.mark.parametrize("path", SHARED_KEY_FILES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_mixed_precision_is_accepted_with_a_warning_and_typos_are_still_rejected(path, caplog):
    name = read_yaml(path)["agent"]["class"]
    with caplog.at_level("WARNING", logger="skrl_like"):
        runner = build(path, mixed_precision=True)
    warnings = [record.getMessage() for record in caplog.records if "mixed_precision" in record.getMessage()]
    assert len(warnings) == 1, warnings
    assert f"{name} cfg['mixed_precision'] = True" in warnings[0] and "no effect" in warnings[0]
    assert "mixed_precision" not in runner.agent.cfg
    with pytest.raises(CommandLineError, match=rf"Unknown key 'mixed_precison' in {name} cfg"):
        build(path, mixed_precison=True)


def test_trpo_has_no_such_key_in_either_backend():
    (path,) = [path for path in tuned_files() if path.endswith("trpo_pendulum.yaml")]
    with pytest.raises(CommandLineError, match=r"Unknown key 'mixed_precision' in TRPO cfg"):
        build(path, mixed_precision=False)


def test_compile_update_is_accepted_by_jax_ppo_with_a_warning(caplog):
    (path,) = [path for path in tuned_files() if path.endswith("ppo_cartpole.yaml")]
    with caplog.at_level("WARNING", logger="skrl_like"):
        runner = build(path, compile_update=True)
    warnings = [record.getMessage() for record in caplog.records if "compile_update" in record.getMessage()]
    assert len(warnings) == 1 and "always compiled" in warnings[0], warnings
    assert "compile_update" not in runner.agent.cfg
