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
