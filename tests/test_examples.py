"""The examples run as users run them (with small step counts)."""

import os
import pathlib
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["manual_training", "manual_training_jax"])
def test_manual_training_notebook_runs_top_to_bottom(name):
    notebook = nbformat.read(ROOT / "examples" / "notebooks" / f"{name}.ipynb", as_version=4)
    os.environ["NOTEBOOK_TIMESTEPS"] = "400"
    try:
        NotebookClient(
            notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
        ).execute()
    finally:
        del os.environ["NOTEBOOK_TIMESTEPS"]
    outputs = "".join(o.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs)
    assert "evaluation return:" in outputs and "episodes:" in outputs


def test_step_trainer_example_runs():
    env = {**os.environ, "SKRL_LIKE_EXAMPLE_TIMESTEPS": "300"}
    result = subprocess.run(
        [sys.executable, "ppo_cartpole_step_trainer.py"],
        cwd=ROOT / "examples" / "torch",
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "Evaluation return over 20 episodes" in result.stdout


def test_curriculum_example_raises_the_level_with_the_return():
    # a low bar (mean return 20) so that two iterations of a short run promote: the level rises from 0
    result = subprocess.run(
        [sys.executable, "ppo_curriculum_cartpole.py", "--timesteps", "16000", "--promote-at", "20"],
        cwd=ROOT / "examples" / "torch",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "wind level 0 -> 1" in result.stdout
    assert "Final wind level: 2 (of 5)" in result.stdout


@pytest.mark.parametrize("algorithm", ["DQN", "DDQN"])
def test_the_dqn_examples_and_their_tuned_files_hold_the_same_settings(algorithm):
    """The CartPole settings are written three times (the two examples and skrl_like/tuned/): a change to one alone
    would benchmark one configuration and ship another."""
    import yaml

    from tests.examples import load_example

    name = "HYPERPARAMETERS" if algorithm == "DQN" else "DDQN_HYPERPARAMETERS"
    torch_settings, jax_settings = (getattr(load_example(b, "dqn_cartpole"), name) for b in ("torch", "jax"))
    assert torch_settings == jax_settings
    tuned = yaml.safe_load(open(ROOT / "skrl_like" / "tuned" / f"{algorithm.lower()}_cartpole.yaml"))
    assert tuned["agent"]["class"] == algorithm
    agent = {key: value for key, value in tuned["agent"].items() if key not in ("class", "experiment")}
    assert {"memory_size": tuned["memory"]["memory_size"], **agent} == torch_settings


RECURRENT_SMOKE = {  # a few updates on small sizes, one short evaluation
    "ppo_rnn_pendulumnovel": ["--timesteps", "256", "--rollouts", "32", "--sequence-length", "16"],
    "sac_rnn_pendulumnovel": ["--timesteps", "130", "--learning-starts", "120", "--hidden-size", "8"],
}


# the JAX runs compile recurrent updates: tens of seconds on 2 busy cores
@pytest.mark.parametrize(
    "backend, name",  # JAX: PPO_RNN only (SAC_RNN's example shares its model code; the suite's time budget)
    [("torch", name) for name in RECURRENT_SMOKE]
    + [pytest.param("jax", "ppo_rnn_pendulumnovel", marks=pytest.mark.slow)],
)
def test_the_recurrent_examples_train_evaluate_and_deploy(backend, name, tmp_path):
    script = ROOT / "examples" / backend / f"{name}.py"
    result = subprocess.run(
        [sys.executable, str(script), *RECURRENT_SMOKE[name], "--evaluation-episodes", "1"],
        cwd=tmp_path,  # the run directory goes there
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Evaluation over 1 episodes (exploration off): mean return" in result.stdout
    if name.startswith("ppo"):  # the PPO_RNN examples also deploy the agent
        assert "One episode with compute_action and a carried hidden state: return" in result.stdout
