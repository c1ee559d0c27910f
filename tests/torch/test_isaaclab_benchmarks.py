"""Issue 28's Isaac Lab-shaped PPO entries: Isaac Lab's Ant values, the plain-torch floor's arithmetic, the JSON
line every entry prints. Not timed: the entries run a few steps on 8 envs."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def run_entry(script: str, *arguments: str, python: str = sys.executable) -> dict:
    result = subprocess.run(
        [python, str(BENCHMARKS / script), "--num-envs", "8", "--timesteps", "16", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_ant_values_are_isaac_labs_and_reach_our_runner_config():
    ant = load("isaaclab_ant")
    assert (ant.ANT_AGENT["rollouts"], ant.ANT_AGENT["learning_epochs"], ant.ANT_AGENT["mini_batches"]) == (16, 4, 2)
    assert ant.HIDDEN == [256, 128, 64] and ant.ANT_AGENT["rewards_shaper_scale"] == 0.6
    cfg = load("isaaclab_standin_ppo").config(64, "/tmp/unused", seed=7, separate=True)
    assert cfg["seed"] == 7 and cfg["models"]["separate"] is True
    agent = cfg["agent"]
    assert (agent["rollouts"], agent["learning_epochs"], agent["mini_batches"]) == (16, 4, 2)
    assert agent["learning_rate_scheduler_kwargs"] == {"kl_threshold": 0.008}
    assert agent["state_preprocessor"] == agent["value_preprocessor"] == "RunningStandardScaler"
    assert cfg["models"]["policy"]["network"][0]["layers"] == [256, 128, 64]


def test_the_floors_gae_matches_a_numpy_reference():
    floor = load("torch_ppo_floor")
    generator = np.random.default_rng(0)
    rewards, values = generator.normal(size=(5, 3)), generator.normal(size=(5, 3))
    dones = (generator.random((5, 3)) < 0.3).astype(np.float64)
    last = generator.normal(size=3)
    expected = np.zeros((5, 3))
    running, next_values = np.zeros(3), last
    for t in reversed(range(5)):
        delta = rewards[t] + 0.99 * (1 - dones[t]) * next_values - values[t]
        running = delta + 0.99 * 0.95 * (1 - dones[t]) * running
        expected[t], next_values = running, values[t]
    advantages, returns = floor.gae(*(torch.tensor(x) for x in (rewards, dones, values, last)), 0.99, 0.95)
    np.testing.assert_allclose(returns.numpy(), expected + values, rtol=1e-12)
    standardised = (expected - expected.mean()) / (expected.std(ddof=1) + 1e-8)
    np.testing.assert_allclose(advantages.numpy(), standardised, rtol=1e-10)


def test_the_floors_scaler_keeps_the_statistics_of_everything_it_saw():
    floor = load("torch_ppo_floor")
    scaler = floor.Scaler(3)
    data = torch.randn(300, 3, dtype=torch.float64) * 2 + 1
    for chunk in data.split(100):
        scaler.update(chunk)
    np.testing.assert_allclose(scaler.mean.numpy(), data.mean(0).numpy(), rtol=1e-5)
    np.testing.assert_allclose(scaler.var.numpy(), data.var(0, correction=0).numpy(), rtol=1e-5)
    x = torch.tensor([[0.5, -1.0, 3.0]], dtype=torch.float64)
    torch.testing.assert_close(scaler.inverse(scaler(x)), x)


@pytest.mark.parametrize("separate", [False, True])
def test_the_floor_prints_the_entries_json_line(separate):
    line = run_entry("torch_ppo_floor.py", "--seed", "3", *(["--separate"] if separate else []))
    assert line["library"] == "torch-floor" and line["separate"] is separate and line["seed"] == 3
    assert line["num_envs"] == 8 and line["env_steps_per_second"] > 0 and line["config"]["mini_batches"] == 2
    assert np.isfinite(line["last_mean_step_reward"])


def test_our_entry_reports_library_seed_commit_and_separate_models():
    line = run_entry("isaaclab_standin_ppo.py", "--seed", "5", "--separate")
    assert line["library"] == "skrl_like" and line["seed"] == 5 and line["separate"] is True
    assert line["commit"] and line["config"]["learning_epochs"] == 4 and line["backend"] == "torch"


ROOT = BENCHMARKS.parent


@pytest.mark.parametrize(
    "venv, script, library, version",
    [
        (".bench_venv_skrl14", "peers/skrl_isaaclab_ppo.py", "skrl", "1.4.3"),
        (".bench_venv_skrl21", "peers/skrl_isaaclab_ppo.py", "skrl", "2.1.1"),
        (".bench_venv_rslrl", "peers/rsl_rl_isaaclab_ppo.py", "rsl_rl", "5."),
    ],
)
def test_the_peer_drivers_print_the_same_line(venv, script, library, version):
    python = ROOT / venv / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{venv} not set up (docs/benchmarks.md, 'Isaac Lab-shaped PPO (issue 28)')")
    line = run_entry(script, "--seed", "2", python=str(python))
    assert line["library"] == library and line["version"].startswith(version) and line["seed"] == 2
    assert line["num_envs"] == 8 and line["config"]["learning_epochs"] == 4 and line["env_steps_per_second"] > 0
    assert line["separate"] is (library == "rsl_rl")


def test_the_profile_script_names_the_update_and_the_rollout_evaluation():
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "profile_isaaclab_ppo.py"), "--num-envs", "8", "--timesteps", "16"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(_update)" in result.stdout and "(post_interaction)" in result.stdout and "(act)" in result.stdout
