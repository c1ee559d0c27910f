"""The command line's run handling (issue 30): torch threads, the final result line, the run's intervals kept by
``--resume --timesteps``, the Runner's headless default, and what a run leaves in its checkpoints folder."""

import json
import os
import time

import pytest
import yaml

from skrl_like import cli
from skrl_like.core.io import TEMPORARY_PREFIX
from skrl_like.core.runner import read_yaml
from skrl_like.run_description import build_runner, make_env, resolve_config_path, set_torch_threads


@pytest.fixture
def torch_threads():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    yield torch
    torch.set_num_threads(before)


def test_torch_runs_one_thread_unless_threads_or_omp_num_threads_say_otherwise(torch_threads, monkeypatch):
    torch = torch_threads
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    torch.set_num_threads(2)
    assert set_torch_threads("torch") == 1 and torch.get_num_threads() == 1
    assert set_torch_threads("torch", 3) == 3 and torch.get_num_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert set_torch_threads("torch") is None and torch.get_num_threads() == 3  # torch read the variable itself
    assert set_torch_threads("jax", 4) is None and torch.get_num_threads() == 3
    with pytest.raises(ValueError, match="--threads must be >= 1, got 0"):
        set_torch_threads("torch", 0)
    args = cli.build_parser().parse_args(["train", "--agent", "PPO", "--env", "CartPole-v1", "--threads", "2"])
    assert args.threads == 2
    assert cli.build_parser().parse_args(["eval", "runs/x", "--threads", "2"]).threads == 2


def test_train_ends_with_the_last_mean_return_and_a_resume_keeps_the_runs_auto_intervals(tmp_path, capsys):
    pytest.importorskip("torch")
    common = ["--agent", "PPO", "--env", "CartPole-v1", "--num-envs", "2", "--seed", "3"]
    common += ["--config", '{"rollouts": 16, "mini_batches": 2}', "--experiment-dir", str(tmp_path)]
    assert cli.main(["train", *common, "--timesteps", "200"]) == 0
    *_, result, run_dir = capsys.readouterr().out.strip().splitlines()
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "results.jsonl"))]
    last = [row for row in rows if row.get("Reward / Total reward (mean)") is not None][-1]
    assert result == (
        f"trained 200 timesteps: mean return {last['Reward / Total reward (mean)']:.4g} "
        f"(row of timestep {last['timestep']})"
    )
    experiment = yaml.safe_load(open(os.path.join(run_dir, "config.yaml")))["agent"]["experiment"]
    assert (experiment["write_interval"], experiment["checkpoint_interval"]) == (2, 20)  # "auto" of 200 timesteps

    assert cli.main(["train", "--resume", run_dir, "--timesteps", "400"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-2].startswith("trained 400 timesteps: mean return ")
    config = yaml.safe_load(open(os.path.join(run_dir, "config.yaml")))
    assert config["trainer"]["timesteps"] == 400
    assert (config["agent"]["experiment"]["write_interval"], config["agent"]["experiment"]["checkpoint_interval"]) == (
        2,
        20,
    )
    timesteps = [json.loads(line)["timestep"] for line in open(os.path.join(run_dir, "results.jsonl"))]
    assert timesteps == list(range(2, 401, 2))  # the same interval before and after the resume
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "run_400.ckpt"))
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "run_380.ckpt"))


def ppo_cartpole(tmp_path, trainer=None, experiment=None):
    cfg = read_yaml(resolve_config_path("ppo_cartpole"))
    cfg["agent"].update(rollouts=8, mini_batches=2)
    cfg["agent"]["experiment"] = {"directory": str(tmp_path), "experiment_name": "run", **(experiment or {})}
    if trainer is None:
        cfg.pop("trainer", None)
    else:
        cfg["trainer"] = trainer
    return build_runner(cfg, make_env({"id": "CartPole-v1", "num_envs": 2}, "torch"))


def test_a_configuration_without_a_trainer_section_or_headless_key_is_not_rendered(tmp_path):
    pytest.importorskip("torch")
    assert ppo_cartpole(tmp_path).trainer.headless is True
    assert ppo_cartpole(tmp_path, trainer={"timesteps": 10}).trainer.headless is True
    assert ppo_cartpole(tmp_path, trainer={"timesteps": 10, "headless": False}).trainer.headless is False


def test_a_run_keeps_the_agent_files_of_the_run_checkpoints_it_keeps_and_leaves_no_temporary_file(tmp_path):
    pytest.importorskip("torch")
    experiment = {"write_interval": 8, "checkpoint_interval": 8}
    runner = ppo_cartpole(tmp_path, trainer={"timesteps": 64, "disable_progressbar": True}, experiment=experiment)
    folder = os.path.join(tmp_path, "run", "checkpoints")
    os.makedirs(folder, exist_ok=True)
    leftover = os.path.join(folder, f"{TEMPORARY_PREFIX}0123abcd_run_8.ckpt")  # a write killed seconds ago
    open(leftover, "wb").close()
    os.utime(leftover, (time.time() - 5, time.time() - 5))
    runner.run("train")
    names = sorted(os.listdir(folder))
    assert names == [
        "agent_48.pt",
        "agent_56.pt",
        "agent_64.pt",
        "best_agent.pt",
        "run_48.ckpt",
        "run_56.ckpt",
        "run_64.ckpt",
        "run_best.ckpt",
    ]


def test_the_final_line_names_the_evaluation_when_one_ran_and_says_when_no_episode_ended():
    evaluation = {"timestep": 1000, "returns": [10.0, 20.0, 30.0], "lengths": [10, 20, 30]}
    assert cli._final_result(1000, {"timestep": 990, "value": 12.345678}, evaluation) == (
        "trained 1000 timesteps: mean return 12.35 (row of timestep 990); "
        "evaluation at timestep 1000: mean return 20 over 3 episodes"
    )
    assert cli._final_result(50, {}, None) == "trained 50 timesteps: no episode ended in a written row"
