"""The README's commands are the ones CI runs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    train_command, test_command = _readme_commands()[:2]
    assert "pytest" in test_command and "examples/torch/ppo_cartpole.py" in train_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_readme_installs_torch_through_the_constraints_file():
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text()
    assert all("-c constraints.txt" in command for command in _readme_commands()[:2])
