"""The ``skrl_like`` command line: train -> eval -> plot as subprocesses on a tiny budget, and every wrong request
ending with one line on stderr and exit code 2 (in-process, before anything trains)."""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from skrl_like import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "skrl_like", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_train_eval_plot(tmp_path, capsys):
    pytest.importorskip("torch")
    train = run_cli(
        "train", "--agent", "PPO", "--env", "CartPole-v1", "--timesteps", "64", "--num-envs", "2", "--seed", "3",
        "--config", '{"rollouts": 16, "mini_batches": 2, "experiment": {"write_interval": 16}}',
        "--experiment-dir", "out", cwd=tmp_path,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr
    run_dir = train.stdout.strip().splitlines()[-1]
    assert os.path.dirname(run_dir) == str(tmp_path / "out")
    config = yaml.safe_load(open(os.path.join(run_dir, "config.yaml")))
    assert (
        config["backend"] == "torch" and config["seed"] == 3 and config["env"] == {"id": "CartPole-v1", "num_envs": 2}
    )
    assert config["agent"]["rollouts"] == 16 and config["trainer"]["timesteps"] == 64
    experiment = config["agent"]["experiment"]
    assert os.path.join(experiment["directory"], experiment["experiment_name"]) == run_dir
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "agent_64.pt"))

    evaluation = run_cli("eval", run_dir, "--episodes", "3", "--seed", "0", cwd=tmp_path)
    assert evaluation.returncode == 0, evaluation.stderr
    match = re.search(
        r"3 episodes, exploration off \(agent_64.pt\): mean return ([\d.]+), std ([\d.]+)", evaluation.stdout
    )
    assert match and 8 <= float(match.group(1)) <= 500
    # a checkpoint file names its run; same checkpoint, same seed: the same returns
    checkpoint = os.path.join(run_dir, "checkpoints", "agent_64.pt")
    assert cli.main(["eval", checkpoint, "--episodes", "3", "--seed", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == evaluation.stdout.splitlines()[-1]

    pytest.importorskip("matplotlib")
    plot = run_cli("plot", run_dir, run_dir, "-o", "runs.png", cwd=tmp_path)
    assert plot.returncode == 0, plot.stderr
    with open(tmp_path / "runs.png", "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"


def test_wrong_flags_and_unknown_agents_exit_2_as_subprocesses(tmp_path):
    flags = run_cli("train", "--timestepz", "5", cwd=tmp_path)
    assert flags.returncode == 2 and "unrecognized arguments: --timestepz" in flags.stderr
    agent = run_cli("train", "--agent", "PPOO", "--env", "CartPole-v1", cwd=tmp_path)
    assert agent.returncode == 2
    assert agent.stderr.strip().splitlines() == [
        "skrl_like train: error: Unknown agent 'PPOO': use one of PPO, A2C, RPO, TRPO, CEM, DDPG, TD3, SAC, DQN, DDQN, "
        "Q_LEARNING, SARSA, IPPO, MAPPO, AMP"
    ]


def one_error_line(capsys, *argv):
    assert cli.main(list(argv)) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_request_errors_are_one_line_and_exit_2(tmp_path, capsys):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("agent:\n  class: PPO\n   rollouts: 16\n")
    assert "is not valid YAML (line 3, column 12)" in one_error_line(capsys, "train", "-f", str(bad_yaml))
    assert "Unknown environment 'CartPol-v1'" in one_error_line(
        capsys, "train", "--agent", "PPO", "--env", "CartPol-v1"
    )
    assert "No configuration file 'nothere.yaml'" in one_error_line(capsys, "train", "-f", "nothere.yaml")
    assert "--config is not valid JSON" in one_error_line(
        capsys, "train", "-f", "tuned/ppo_cartpole.yaml", "--config", "{learning_rate: 1}"
    )
    assert "DQN has a tuned configuration for discrete actions only" in one_error_line(
        capsys, "train", "--agent", "DQN", "--env", "Pendulum-v1"
    )
    assert (
        "AMP needs amp_observation_space and collect_reference_motions from its env, which Pendulum-v1 does not have"
        in one_error_line(capsys, "train", "--agent", "AMP", "--env", "Pendulum-v1")
    )
    assert "Cannot import 'no_such_module', the module of the env id 'no_such_module:Env-v0'" in one_error_line(
        capsys, "train", "--agent", "PPO", "--env", "no_such_module:Env-v0"
    )
    assert "Unknown environment 'skrl_like.envs:NoSuchEnv-v0'" in one_error_line(
        capsys, "train", "--agent", "PPO", "--env", "skrl_like.envs:NoSuchEnv-v0"
    )
    assert "train needs -f FILE, or --agent NAME and --env ID" in one_error_line(capsys, "train", "--agent", "PPO")
    assert "give either -f FILE or --agent, not both" in one_error_line(
        capsys, "train", "-f", "sac_pendulum", "--agent", "SAC"
    )
    no_env = tmp_path / "skrl_layout.yaml"  # skrl's files have no env section
    no_env.write_text(
        yaml.safe_dump(
            {k: v for k, v in yaml.safe_load(open(cli.resolve_config_path("ppo_cartpole"))).items() if k != "env"}
        )
    )
    assert "The configuration has no env section: add e.g. env: {id: CartPole-v1, num_envs: 8} (or pass --env)" in (
        one_error_line(capsys, "train", "-f", str(no_env))
    )
    unknown_key = one_error_line(
        capsys, "train", "-f", "ppo_cartpole", "--config", '{"learning_rat": 0.1}', "--experiment-dir", str(tmp_path)
    )
    assert "Unknown key 'learning_rat' in PPO cfg. Did you mean 'learning_rate'?" in unknown_key
    assert "has no config.yaml" in one_error_line(capsys, "eval", str(tmp_path))
    assert "No run directory or checkpoint" in one_error_line(capsys, "eval", str(tmp_path / "missing"))
    assert "has no results.jsonl rows or TensorBoard scalars" in one_error_line(capsys, "plot", str(tmp_path))


def test_tuned_files_resolve_by_name_and_every_agent_has_one():
    assert cli.resolve_config_path("tuned/ppo_cartpole.yaml") == os.path.join(cli.TUNED_DIR, "ppo_cartpole.yaml")
    assert cli.resolve_config_path("sac_pendulum") == os.path.join(cli.TUNED_DIR, "sac_pendulum.yaml")
    shipped = {os.path.basename(path) for path in cli.tuned_files()}
    for files in cli.TUNED_FOR_AGENT.values():
        assert set(files.values()) <= shipped
    for path in cli.tuned_files():  # each names its env and an agent the table routes to it
        cfg = yaml.safe_load(open(path))
        assert "id" in cfg["env"] or "pettingzoo" in cfg["env"]
        key = cli.component_key(cfg["agent"]["class"])
        assert os.path.basename(path) in cli.TUNED_FOR_AGENT[key].values()


def test_amp_trains_from_its_tuned_file_on_the_env_it_names_and_evaluates(tmp_path, capsys):
    """amp_pendulum.yaml names skrl_like.envs:AmpPendulum-v0 in gymnasium's module:id syntax: train -f makes it (a
    vector env of two here), eval rebuilds it alone from the run's config.yaml; --agent AMP routes to the file only
    for an env that provides reference motions."""
    pytest.importorskip("torch")
    overrides = '{"rollouts": 16, "amp_batch_size": 64, "experiment": {"write_interval": 16}}'
    argv = ["train", "-f", "tuned/amp_pendulum.yaml", "--timesteps", "32", "--num-envs", "2", "--config", overrides]
    assert cli.main([*argv, "--experiment-dir", str(tmp_path)]) == 0
    run_dir = capsys.readouterr().out.strip().splitlines()[-1]
    config = yaml.safe_load(open(os.path.join(run_dir, "config.yaml")))
    assert config["env"] == {"id": "skrl_like.envs:AmpPendulum-v0", "num_envs": 2} and config["agent"]["class"] == "AMP"
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "agent_32.pt"))
    assert cli.main(["eval", run_dir, "--episodes", "2", "--seed", "0"]) == 0
    assert re.fullmatch(
        r"2 episodes, exploration off \(agent_32.pt\): mean return -\d+\.\d+, std \d+\.\d+",
        capsys.readouterr().out.strip().splitlines()[-1],
    )
    routed = cli.config_for_agent("AMP", "skrl_like.envs:AmpPendulum-v0")
    assert routed == yaml.safe_load(open(cli.resolve_config_path("amp_pendulum")))


def test_resume_continues_bit_identically(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    overrides = '{"rollouts": 16, "mini_batches": 2, "experiment": {"write_interval": 8, "checkpoint_interval": 16}}'
    common = ["--agent", "PPO", "--env", "CartPole-v1", "--num-envs", "2", "--seed", "3", "--config", overrides]
    runs = {}
    for name, timesteps in (("full", "64"), ("part", "32")):
        assert cli.main(["train", *common, "--timesteps", timesteps, "--experiment-dir", str(tmp_path / name)]) == 0
        runs[name] = capsys.readouterr().out.strip().splitlines()[-1]
    resumed = run_cli("train", "--resume", runs["part"], "--timesteps", "64", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == runs["part"]  # the same run directory
    assert yaml.safe_load(open(os.path.join(runs["part"], "config.yaml")))["trainer"]["timesteps"] == 64
    full, part = (torch.load(os.path.join(runs[n], "checkpoints", "agent_64.pt"), weights_only=False) for n in runs)
    for module in ("policy", "value", "optimizer"):
        assert repr(full[module]) == repr(part[module])  # every tensor and optimizer step, bit for bit
    rows = {
        name: [line.split('"wall_time"')[0] for line in open(os.path.join(run, "results.jsonl"))]
        for name, run in runs.items()
    }
    assert rows["full"] == rows["part"] and len(rows["full"]) == 8

    # a run checkpoint given to eval plays the agent checkpoint of the same timestep
    assert cli.main(["eval", os.path.join(runs["part"], "checkpoints", "run_64.ckpt"), "--episodes", "2"]) == 0
    assert "2 episodes, exploration off (agent_64.pt)" in capsys.readouterr().out

    assert "reached timestep 64 of 64: give a larger total" in one_error_line(capsys, "train", "--resume", runs["part"])
    assert "--seed cannot change it (only --timesteps)" in one_error_line(
        capsys, "train", "--resume", runs["part"], "--seed", "1"
    )
    assert "holds no full-state checkpoint" in one_error_line(
        capsys, "train", "--resume", str(_run_without_checkpoints(tmp_path)), "--timesteps", "9"
    )


def _run_without_checkpoints(tmp_path):
    run = tmp_path / "empty_run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump({"agent": {"class": "PPO", "experiment": {}}, "models": {}}))
    return run


def test_eval_plays_the_best_checkpoint_on_request(tmp_path, capsys):
    pytest.importorskip("torch")
    runs = {}
    for interval in (16, 0):
        experiment = {"write_interval": 16, "checkpoint_interval": interval}
        config = {"rollouts": 16, "mini_batches": 2, "experiment": experiment}
        args = ["train", "--agent", "PPO", "--env", "CartPole-v1", "--timesteps", "64", "--num-envs", "2"]
        args += ["--seed", "3", "--config", json.dumps(config), "--experiment-dir", str(tmp_path / f"every{interval}")]
        assert cli.main(args) == 0
        runs[interval] = capsys.readouterr().out.strip().splitlines()[-1]
    assert os.path.isfile(os.path.join(runs[16], "checkpoints", "best_agent.pt"))

    assert cli.main(["eval", runs[16], "--checkpoint", "best", "--episodes", "2", "--seed", "0"]) == 0
    best = capsys.readouterr().out.splitlines()[-1]
    assert re.fullmatch(r"2 episodes, exploration off \(best_agent.pt\): mean return [\d.]+, std [\d.]+", best)
    # the same file named by its path: the same returns
    best_file = os.path.join(runs[16], "checkpoints", "best_agent.pt")
    assert cli.main(["eval", best_file, "--episodes", "2", "--seed", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == best
    assert cli.main(["eval", runs[16], "--episodes", "1"]) == 0  # the last one by default
    assert "(agent_64.pt)" in capsys.readouterr().out

    assert one_error_line(capsys, "eval", runs[0], "--checkpoint", "best") == (
        f"skrl_like eval: error: The run '{runs[0]}' has no best checkpoint (checkpoints/best_agent.pt): one is "
        "written at the checkpoint intervals from the tracked episode returns, so the run needs agent.experiment's "
        "checkpoint_interval and write_interval > 0 (or 'auto'); play its last checkpoint with --checkpoint last"
    )
    agent_file = os.path.join(runs[0], "checkpoints", "agent_64.pt")
    error = one_error_line(capsys, "eval", agent_file, "--checkpoint", "best")
    assert "is a checkpoint file: give the run directory, or leave --checkpoint out" in error


def test_evaluation_during_training_builds_its_env_and_picks_the_best_checkpoint(tmp_path, capsys):
    """A file whose trainer section sets evaluation_interval trains with a second env built from its env section, and
    ``eval --checkpoint best`` plays the checkpoint of the best evaluation (not the best training return's)."""
    pytest.importorskip("torch")
    config = {
        "rollouts": 16,
        "mini_batches": 2,
        "experiment": {"write_interval": 16, "checkpoint_interval": 16},
        "trainer": {"evaluation_interval": 16, "evaluation_episodes": 2},
    }
    args = ["train", "--agent", "PPO", "--env", "CartPole-v1", "--timesteps", "96", "--num-envs", "2", "--seed", "5"]
    assert cli.main([*args, "--config", json.dumps(config), "--experiment-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    run_dir = out[-1]
    assert re.search(r"evaluation at timestep 96: mean return [\d.]+ over 2 episodes", out[-2])
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "results.jsonl"))]
    evaluations = [
        (row["Evaluation / Total reward (mean)"], -row["timestep"])
        for row in rows
        if "Evaluation / Total reward (mean)" in row
    ]
    assert len(evaluations) == 6
    best_timestep = -max(evaluations)[1]  # the first of the highest, as the trainer keeps it

    assert cli.main(["eval", run_dir, "--checkpoint", "best", "--episodes", "3", "--seed", "0"]) == 0
    best = capsys.readouterr().out.splitlines()[-1]
    assert "(run_best.ckpt)" in best
    assert (
        cli.main(
            [
                "eval",
                os.path.join(run_dir, "checkpoints", f"agent_{best_timestep}.pt"),
                "--episodes",
                "3",
                "--seed",
                "0",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[-1].split("): ")[1] == best.split("): ")[1]


def test_a_runner_asked_to_evaluate_without_an_evaluation_env_names_the_argument():
    pytest.importorskip("torch")
    from skrl_like.core.runner import RunnerConfigError
    from skrl_like.run_description import make_env
    from skrl_like.torch.utils.runner import Runner

    cfg = yaml.safe_load(open(cli.resolve_config_path("dqn_cartpole")))
    env = make_env(cfg.pop("env"), "torch")
    with pytest.raises(
        RunnerConfigError,
        match=r"trainer.evaluation_interval = 2500 evaluates during training on a "
        r"second env: pass Runner\(env, cfg, evaluation_env=wrap_env",
    ):
        Runner(env, cfg)
    env.close()
