"""Ctrl-C as a terminal sends it: SIGINT to the whole process group (``os.killpg``) of a run started in its own
session, for the command line and for a user's script whose ``AsyncVectorEnv`` workers die with it (issue 30)."""

import glob
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from skrl_like import cli
from skrl_like.core import checkpoints

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_in_own_session(command, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def wait_for_rows(process, pattern, rows=2, timeout=240.0):
    """The run directory matching ``pattern`` once its results.jsonl holds ``rows`` rows (training is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for results in glob.glob(os.path.join(pattern, "results.jsonl")):
            with open(results) as file:
                if sum(1 for line in file if line.strip()) >= rows:
                    return os.path.dirname(results)
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"no results rows in {pattern} within {timeout} s")


def interrupt_group(process, timeout=120.0):
    """SIGINT to the process's whole group, as a terminal's Ctrl-C; its exit code, stdout and stderr."""
    os.killpg(process.pid, signal.SIGINT)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"the run did not stop within {timeout} s of Ctrl-C: {err[-2000:]}")
    return process.returncode, out, err


def test_ctrl_c_ends_train_with_one_line_exit_130_a_checkpoint_and_an_evaluable_run(tmp_path, capsys):
    pytest.importorskip("torch")
    overrides = {"rollouts": 16, "mini_batches": 2, "experiment": {"write_interval": 16, "checkpoint_interval": 50000}}
    process = start_in_own_session(
        [sys.executable, "-m", "skrl_like", "train", "--agent", "PPO", "--env", "CartPole-v1", "--num-envs", "2",
         "--timesteps", "100000", "--seed", "1", "--config", json.dumps(overrides), "--experiment-dir", "out"],
        cwd=tmp_path,
    )  # fmt: skip
    run_dir = wait_for_rows(process, str(tmp_path / "out" / "*"))
    code, out, err = interrupt_group(process)
    assert code == 130, err
    assert "Traceback" not in err
    match = re.fullmatch(
        r"skrl_like train: stopped at timestep (\d+); resume with `skrl_like train --resume (.+)`",
        err.strip().splitlines()[-1],
    )
    assert match and match.group(2) == run_dir, err
    timestep = int(match.group(1))
    assert 32 <= timestep < 100000
    run_checkpoint = os.path.join(run_dir, "checkpoints", f"run_{timestep}.ckpt")
    assert checkpoints.read_checkpoint(run_checkpoint)["timestep"] == timestep
    assert not glob.glob(os.path.join(run_dir, "checkpoints", "agent_*"))  # stopped before its checkpoint_interval

    # eval reads the agent from the run checkpoint: the run directory, or the checkpoint by name
    for target in (run_dir, run_checkpoint):
        assert cli.main(["eval", target, "--episodes", "2", "--seed", "0"]) == 0
        assert re.fullmatch(
            rf"2 episodes, exploration off \(run_{timestep}.ckpt\): mean return [\d.]+, std [\d.]+",
            capsys.readouterr().out.strip().splitlines()[-1],
        )


ASYNC_SCRIPT = """
import time

import gymnasium
from skrl_like.core.runner import read_yaml
from skrl_like.run_description import build_runner, resolve_config_path
from skrl_like.{backend}.envs.wrappers import wrap_env
from skrl_like.utils import set_seed


class SlowStep(gymnasium.Wrapper):
    \"\"\"A step that takes a while (as a simulator's does), so the Ctrl-C lands while the workers step.\"\"\"

    def step(self, action):
        time.sleep(0.02)
        return self.env.step(action)


if __name__ == "__main__":
    set_seed(1)
    make = lambda: SlowStep(gymnasium.make("CartPole-v1"))
    env = wrap_env(gymnasium.vector.AsyncVectorEnv([make] * 2), verbose=False)
    cfg = read_yaml(resolve_config_path("ppo_cartpole"))
    cfg["agent"].update(rollouts=16, mini_batches=2)
    cfg["agent"]["experiment"] = {{"directory": "out", "experiment_name": "run", "write_interval": 16,
                                   "checkpoint_interval": 50000}}
    cfg["trainer"] = {{"timesteps": 100000, "disable_progressbar": True}}
    cfg["backend"] = "{backend}"
    build_runner(cfg, env).run("train")
"""


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_process_group_ctrl_c_with_async_env_workers_still_writes_the_checkpoint(tmp_path, backend):
    """The workers die of the SIGINT in the middle of a step: the trainer takes that as the interrupt and writes the
    checkpoint of the run before that step, whose observations died with the workers (the resumed run resets)."""
    pytest.importorskip(backend)
    script = tmp_path / "train_async.py"
    script.write_text(textwrap.dedent(ASYNC_SCRIPT.format(backend=backend)))
    process = start_in_own_session([sys.executable, str(script)], cwd=tmp_path)
    run_dir = wait_for_rows(process, str(tmp_path / "out" / "run"))
    code, _, err = interrupt_group(process)
    assert code != 0 and "KeyboardInterrupt: training stopped by Ctrl-C" in err, err[-3000:]
    written = checkpoints.numbered_checkpoints(os.path.join(run_dir, "checkpoints"))
    assert len(written) == 1, err[-3000:]
    timestep, path = written[0]
    payload = checkpoints.read_checkpoint(path)
    assert payload["timestep"] == timestep >= 32
    assert payload["trainer"]["states"] is None  # the workers' envs are gone: a resume resets them
