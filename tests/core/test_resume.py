"""Full-state checkpoints resume exactly, and the run directory reads back (issue 14, points 1 and 5).

The end-to-end cases run in processes of their own (tests/resume_driver.py): a resumed run must get everything from
the checkpoint file, nothing from the process that wrote it. They use the repository's PPO (with a KL-adaptive
learning rate and both preprocessors, checkpointed mid-rollout), SAC and DQN examples, made tiny.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from resume_driver import build, parameters

from skrl_like.core.checkpoints import CheckpointMismatchError, find_checkpoint
from skrl_like.core.results import load_run

DRIVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resume_driver.py")
STEPS = 36  # not a multiple of PPO's 8 rollouts: the checkpoint is taken mid-rollout (its memory is saved then)


def run_driver(*args, check=True):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, DRIVER, *args], capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def assert_identical(first_path, second_path):
    first, second = np.load(first_path), np.load(second_path)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if not np.array_equal(first[name], second[name])]
    assert not differing, f"{len(differing)} of {len(first.files)} arrays differ, e.g. {differing[:3]}"


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """Per backend: the 2N-step runs' parameters and the N-step runs' checkpoints (one process per backend)."""
    out = {}

    def get(backend):
        if backend not in out:
            directory = str(tmp_path_factory.mktemp(f"resume_{backend}"))
            run_driver(backend, "ppo,sac,dqn", "full", directory, str(STEPS))
            out[backend] = directory
        return out[backend]

    return get


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_n_steps_then_a_new_process_that_restores_and_runs_n_more_equals_2n_steps(backend, uninterrupted):
    directory = uninterrupted(backend)
    run_driver(backend, "ppo,sac,dqn", "resume", directory, str(STEPS))
    learning_rate = np.load(os.path.join(directory, "ppo_full.npz"))["learning_rate"]
    assert learning_rate != pytest.approx(1e-3)  # the KL-adaptive schedule changed it: the resume must carry it
    for algorithm in ("ppo", "sac", "dqn"):
        assert_identical(
            os.path.join(directory, f"{algorithm}_full.npz"), os.path.join(directory, f"{algorithm}_resumed.npz")
        )


def test_a_killed_run_restarted_from_its_last_checkpoint_equals_the_uninterrupted_run(uninterrupted):
    directory = uninterrupted("torch")
    checkpoint_dir = os.path.join(directory, "killed", "ppo", "checkpoints")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, DRIVER, "torch", "ppo", "killable", directory, str(STEPS)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if os.path.isdir(checkpoint_dir) and any(name.startswith("run_") for name in os.listdir(checkpoint_dir)):
            break
        time.sleep(0.01)
    process.kill()
    assert process.wait() == -signal.SIGKILL, "the run ended before it could be killed"
    killed_at = int(os.path.basename(find_checkpoint(os.path.dirname(checkpoint_dir)))[4:-5])
    assert killed_at < 2 * STEPS

    run_driver("torch", "ppo", "restart", directory, str(STEPS))
    assert_identical(os.path.join(directory, "ppo_full.npz"), os.path.join(directory, "ppo_restarted.npz"))


# -- in one process (torch PPO unless said otherwise) ---------------------------------------------------------------


def arrays_equal(first, second):
    return sorted(first) == sorted(second) and all(np.array_equal(first[k], second[k]) for k in first)


def test_train_again_after_raising_timesteps_continues_the_run(tmp_path):
    # (JAX: in the driver's "full" mode, whose PPO run is two train() calls)
    whole = build("torch", "ppo", 2 * STEPS, str(tmp_path / "whole"))
    whole.train()
    halves = build("torch", "ppo", STEPS, str(tmp_path / "halves"))
    halves.train()
    assert halves.initial_timestep == STEPS
    halves.timesteps = 2 * STEPS
    halves.train()
    assert halves.initial_timestep == 2 * STEPS
    assert arrays_equal(parameters(whole), parameters(halves))
    rows = load_run(str(tmp_path / "halves" / "ppo")).rows
    assert [row["timestep"] for row in rows] == list(range(4, 2 * STEPS + 1, 4))  # no step counted twice


def test_a_linear_lr_schedule_resumes_where_it_stopped(tmp_path):
    import torch

    schedule = {
        "learning_rate_scheduler": torch.optim.lr_scheduler.LinearLR,
        "learning_rate_scheduler_kwargs": {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 8},
    }
    whole = build("torch", "ppo", 2 * STEPS, str(tmp_path / "whole"), ppo_cfg=schedule)
    whole.train()
    first = build("torch", "ppo", STEPS, str(tmp_path / "first"), ppo_cfg=schedule)
    first.train()
    path = first.save()
    second = build("torch", "ppo", 2 * STEPS, str(tmp_path / "second"), ppo_cfg=schedule)
    second.restore(path)
    assert second.agents.scheduler.last_epoch == first.agents.scheduler.last_epoch > 0
    second.train()
    assert second.agents.optimizer.param_groups[0]["lr"] == whole.agents.optimizer.param_groups[0]["lr"]
    assert arrays_equal(parameters(whole), parameters(second))


def test_ctrl_c_finishes_the_step_writes_a_checkpoint_and_the_run_resumes_exactly(tmp_path):
    interrupt_at = 13

    def interrupting_shaper(rewards, timestep, timesteps):
        if timestep == interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        return rewards

    whole = build("torch", "ppo", 2 * STEPS, str(tmp_path / "whole"))
    whole.train()
    stopped = build(
        "torch",
        "ppo",
        2 * STEPS,
        str(tmp_path / "stopped"),
        checkpoint_interval=1000,
        ppo_cfg={"rewards_shaper": interrupting_shaper},
    )
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt, match=f"after timestep {interrupt_at + 1}"):
        stopped.train()
    assert signal.getsignal(signal.SIGINT) is handler
    path = find_checkpoint(str(tmp_path / "stopped" / "ppo"))
    assert os.path.basename(path) == f"run_{interrupt_at + 1}.ckpt"

    resumed = build("torch", "ppo", 2 * STEPS, str(tmp_path / "resumed"))
    resumed.restore(path)
    assert resumed.initial_timestep == interrupt_at + 1
    resumed.train()
    assert arrays_equal(parameters(whole), parameters(resumed))


def test_a_run_keeps_its_last_k_checkpoints_and_the_best_one_and_ends_with_one(tmp_path):
    trainer = build("torch", "ppo", 62, str(tmp_path), checkpoint_interval=4, trainer_cfg={"checkpoint_keep": 2})
    trainer.train()
    directory = tmp_path / "ppo" / "checkpoints"
    names = sorted(os.listdir(directory))
    run_files = [name for name in names if name.startswith("run_") and name != "run_best.ckpt"]
    assert run_files == ["run_60.ckpt", "run_62.ckpt"]  # the last periodic one and the final one
    assert "agent_60.pt" in names  # skrl's per-agent files are still written beside them
    assert find_checkpoint(str(tmp_path / "ppo")) == str(directory / "run_62.ckpt")
    best_timestep = trainer.agents.checkpoint_best_modules["timestep"]
    assert best_timestep > 0
    best = find_checkpoint(str(tmp_path / "ppo"), "best")
    assert os.path.basename(best) == "run_best.ckpt"
    fresh = build("torch", "ppo", 62, str(tmp_path / "fresh"))
    fresh.restore(best)
    assert fresh.initial_timestep == best_timestep


def test_a_mismatched_checkpoint_names_what_differs_and_changes_nothing(tmp_path):
    import torch

    trainer = build("torch", "ppo", 8, str(tmp_path / "a"))
    trainer.train()
    path = trainer.save()

    other = build("torch", "ppo", 8, str(tmp_path / "b"), num_envs=3)
    with pytest.raises(CheckpointMismatchError, match="it has 2 environments, this trainer 3"):
        other.restore(path)

    dqn = build("torch", "dqn", 8, str(tmp_path / "c"))
    with pytest.raises(CheckpointMismatchError, match=r"it holds the agents \['PPO'\], this trainer \['DQN'\]"):
        dqn.restore(path)

    jax_trainer = build("jax", "ppo", 8, str(tmp_path / "d"))
    with pytest.raises(CheckpointMismatchError, match="written by the torch backend, this trainer is jax"):
        jax_trainer.restore(path)

    unscheduled = build("torch", "ppo", 8, str(tmp_path / "e"), ppo_cfg={"learning_rate_scheduler": None})
    with pytest.raises(CheckpointMismatchError, match=r"modules differ \(missing in the checkpoint: \[\], only in "):
        unscheduled.restore(path)
    linear = {"learning_rate_scheduler": torch.optim.lr_scheduler.LinearLR, "learning_rate_scheduler_kwargs": {}}
    scheduled = build("torch", "ppo", 8, str(tmp_path / "e"), ppo_cfg=linear)
    with pytest.raises(CheckpointMismatchError, match="'attributes/scheduler' is a KLAdaptiveLR in the checkpoint, "):
        scheduled.restore(path)

    wider = build("torch", "ppo", 8, str(tmp_path / "f"))
    wider.agents.value.net[0] = torch.nn.Linear(4, 32)  # another width: the 'value' module differs
    before = parameters(wider)
    with pytest.raises(CheckpointMismatchError, match=r"module 'value' \(.*net\.0\.weight"):
        wider.restore(path)
    assert arrays_equal(before, parameters(wider))  # nothing was loaded, not even the policy
    assert wider.initial_timestep == 0


def test_a_corrupt_or_foreign_file_fails_clearly(tmp_path):
    trainer = build("torch", "ppo", 8, str(tmp_path))
    trainer.train()
    path = trainer.save()
    with open(path, "rb") as file:
        data = file.read()
    torn = tmp_path / "torn.ckpt"
    torn.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointMismatchError, match="corrupt or truncated"):
        trainer.restore(str(torn))
    agent_file = str(tmp_path / "agent.pt")
    trainer.agents.save(agent_file)
    with pytest.raises(CheckpointMismatchError, match=r"not a full-state run checkpoint .*agent.load"):
        trainer.restore(agent_file)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no full-state checkpoint"):
        find_checkpoint(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="'last' or 'best'"):
        find_checkpoint(str(tmp_path), "first")


def test_results_rows_and_params_read_back_and_listeners_get_each_row(tmp_path):
    trainer = build("torch", "ppo", 24, str(tmp_path), trainer_cfg={"disable_progressbar": False})
    received = []
    trainer.agents.result_listeners.append(received.append)
    trainer.train()
    run = load_run(str(tmp_path / "ppo"))
    assert [row["timestep"] for row in run.rows] == [4, 8, 12, 16, 20, 24]
    # listeners get the row as written (a value that is not finite is NaN there, null in the file)
    assert [{k: v for k, v in row.items() if v == v} for row in received] == [
        {k: v for k, v in row.items() if v is not None} for row in run.rows
    ]
    first = run.rows[0]
    assert first["env_steps"] == 8 and first["env_steps_per_second"] > 0 and first["wall_time"] > 1e9
    assert "Loss / Policy loss" in run.tags
    steps, losses = run.series("Loss / Policy loss", x="env_steps")
    assert steps == [16, 32, 48]  # one update per 8 timesteps of 2 envs, written at the next row
    assert all(isinstance(value, float) for value in losses)
    assert run.params["trainer"]["cfg"]["timesteps"] == 24
    assert run.params["agents"][0]["class"] == "PPO"
    assert run.params["agents"][0]["cfg"]["state_preprocessor"].endswith("RunningStandardScaler")
    assert run.params["env"]["id"] == "CartPole-v1" and run.params["env"]["num_envs"] == 2
    with pytest.raises(KeyError, match="has the tag 'nothing'"):
        run.series("nothing")


def test_a_restored_run_continues_the_step_counts_and_drops_rows_written_after_its_checkpoint(tmp_path, capsys):
    trainer = build("torch", "ppo", 16, str(tmp_path), checkpoint_interval=8)
    trainer.train()
    results = tmp_path / "ppo" / "results.jsonl"
    assert [json.loads(line)["timestep"] for line in results.read_text().splitlines()] == [4, 8, 12, 16]

    resumed = build("torch", "ppo", 24, str(tmp_path), trainer_cfg={"disable_progressbar": False})
    resumed.restore(str(tmp_path / "ppo" / "checkpoints" / "run_8.ckpt"))
    assert [json.loads(line)["timestep"] for line in results.read_text().splitlines()] == [4, 8]
    capsys.readouterr()
    resumed.train()
    bar = capsys.readouterr().out
    assert " 8/24 " in bar and "24/24" in bar and "env steps/s=" in bar
    assert [json.loads(line)["timestep"] for line in results.read_text().splitlines()] == [4, 8, 12, 16, 20, 24]


def test_checkpoint_memory_is_validated_and_auto_saves_what_a_resume_needs(tmp_path, caplog):
    with pytest.raises(ValueError, match=r"\['checkpoint_memory'\] must be 'auto' .* got 'yes'"):
        build("torch", "ppo", 8, str(tmp_path), experiment={"checkpoint_memory": "yes"})
    ppo = build("torch", "ppo", 8, str(tmp_path))
    ppo.train()  # one whole rollout: nothing of it is read again
    assert "tensors" not in ppo.agents.run_state()["memories"]["memory"]
    ppo.timesteps = 11
    ppo.train()  # mid-rollout: the next update reads these 3 rows
    assert ppo.agents.run_state()["memories"]["memory"]["tensors"]["states"].shape == (8, 2, 4)
    dqn = build("torch", "dqn", 8, str(tmp_path / "dqn"))
    assert "tensors" in dqn.agents.run_state()["memories"]["memory"]  # a replay memory, always
    off = build("torch", "ppo", 11, str(tmp_path / "off"), experiment={"checkpoint_memory": False})
    off.train()
    assert "tensors" not in off.agents.run_state()["memories"]["memory"]
    assert "in the middle of a rollout and cfg['experiment']['checkpoint_memory'] is False" in caplog.text


def test_an_env_whose_state_cannot_be_pickled_warns_and_the_resume_resets_it(tmp_path, caplog):
    import threading

    trainer = build("torch", "ppo", 8, str(tmp_path))
    trainer.train()
    trainer.env._env.envs[0].unwrapped.lock = threading.Lock()
    path = trainer.save()
    assert "cannot be saved (env.envs" in caplog.text
    resumed = build("torch", "ppo", 16, str(tmp_path / "b"))
    resumed.restore(path)
    assert "holds no environment state" in caplog.text
    assert resumed._resume_states is None
    resumed.train()  # starts from a reset
    assert resumed.initial_timestep == 16


def test_a_multi_agent_run_and_its_pettingzoo_env_resume_exactly(tmp_path):
    from examples import load_example
    from skrl_like.torch.trainers import SequentialTrainer
    from skrl_like.utils import set_seed

    example = load_example("torch", "ippo_simple_spread")

    def make(timesteps, name):
        set_seed(3)
        env = example.make_env(seed=3)  # MPE: an EzPickle env holding a pygame window, saved attribute by attribute
        experiment = {"directory": str(tmp_path), "experiment_name": name, "write_interval": 5}
        agent = example.make_agent(env, mappo=True, rollouts=10, experiment=experiment)
        cfg = {
            "timesteps": timesteps,
            "headless": True,
            "disable_progressbar": True,
            "close_environment_at_exit": False,
        }
        return SequentialTrainer(env=env, agents=agent, cfg=cfg)

    def policies(trainer):
        return {
            f"{uid}/{key}": value.detach().numpy().copy()
            for uid, learner in trainer.agents.learners.items()
            for key, value in learner.policy.state_dict().items()
        }

    whole = make(46, "whole")
    whole.train()
    first = make(23, "first")  # mid-episode (25 cycles) and mid-rollout
    first.train()
    path = first.save()  # before the next set-up seeds the process's generators again
    second = make(46, "second")
    second.restore(path)
    second.train()
    assert arrays_equal(policies(whole), policies(second))


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_step_trainer_saved_after_n_calls_and_restored_into_a_new_one_equals_2n_calls(backend, tmp_path):
    calls = 10  # mid-rollout (PPO updates every 8 steps) and mid-episode

    def step_trainer(name):
        return build(backend, "ppo", 2 * calls, str(tmp_path / name), trainer="StepTrainer")

    whole = step_trainer("whole")
    for _ in range(calls):
        whole.train()
    path = whole.save()  # (saving changes nothing: the run goes on as if it had not saved)
    assert os.path.basename(path) == f"run_{calls + 1}.ckpt"  # the next step's timestep (skrl's counter is 1-based)
    for _ in range(calls):
        whole.train()
    second = step_trainer("second")
    second.restore(path)
    assert second._timestep == calls and second.states is not None
    for _ in range(calls):
        second.train()
    assert second._timestep == 2 * calls
    assert arrays_equal(parameters(whole), parameters(second))
    # the results rows continue the saved run's: the same timesteps and episode statistics as the uninterrupted run
    whole_rows, second_rows = (
        load_run(str(tmp_path / "whole" / "ppo")).rows,
        load_run(str(tmp_path / "second" / "ppo")).rows,
    )
    assert [row["timestep"] for row in second_rows] == [row["timestep"] for row in whole_rows][-len(second_rows) :]
    assert [row.get("Reward / Total reward (mean)") for row in second_rows] == [
        row.get("Reward / Total reward (mean)") for row in whole_rows[-len(second_rows) :]
    ]


def test_a_step_trainer_continues_a_sequential_trainers_checkpoint_at_its_next_timestep(tmp_path):
    whole = build("torch", "ppo", 2 * STEPS, str(tmp_path / "whole"))
    whole.train()
    first = build("torch", "ppo", STEPS, str(tmp_path / "first"))
    first.train()
    path = first.save()
    stepping = build("torch", "ppo", 2 * STEPS, str(tmp_path / "second"), trainer="StepTrainer")
    stepping.restore(path)
    for timestep in range(STEPS, 2 * STEPS):  # the loop's timesteps, passed explicitly
        stepping.train(timestep)
    assert stepping._timestep == STEPS - 1 and stepping.initial_timestep == 2 * STEPS
    assert arrays_equal(parameters(whole), parameters(stepping))


def test_with_evaluation_during_training_a_restored_run_evaluates_as_the_uninterrupted_one(tmp_path):
    # the evaluation env's sub-envs run on mid-episode from one evaluation to the next: the checkpoint must hold them
    evaluation = {"evaluation_interval": 12, "evaluation_episodes": 3}

    def evaluated(name):
        return build("torch", "ppo", STEPS, str(tmp_path / name), trainer_cfg=evaluation, evaluation_env=True)

    whole = evaluated("whole")
    whole.train()
    path = whole.save()
    whole.timesteps = 2 * STEPS
    whole.train()
    resumed = evaluated("resumed")
    resumed.restore(path)
    assert resumed.last_evaluation["timestep"] == STEPS
    resumed.timesteps = 2 * STEPS
    resumed.train()
    assert arrays_equal(parameters(whole), parameters(resumed))

    def evaluations(name):
        rows = load_run(str(tmp_path / name / "ppo")).rows
        return [
            (row["timestep"], {tag: value for tag, value in row.items() if tag.startswith("Evaluation / ")})
            for row in rows
            if row["timestep"] > STEPS and any(tag.startswith("Evaluation / ") for tag in row)
        ]

    assert [timestep for timestep, _ in evaluations("resumed")] == [48, 60, 72]
    assert evaluations("resumed") == evaluations("whole")
    assert resumed.last_evaluation == whole.last_evaluation
    assert resumed._evaluation.best_timestep == whole._evaluation.best_timestep


def test_a_step_trainer_with_evaluation_resumes_its_evaluations_exactly(tmp_path):
    calls = 12  # evaluations at timesteps 12 and 24 (a row's timestep is its step's + 1): one on each side
    evaluation = {"evaluation_interval": 12, "evaluation_episodes": 3}

    def step_trainer(name):
        return build(
            "torch",
            "ppo",
            2 * calls,
            str(tmp_path / name),
            trainer="StepTrainer",
            trainer_cfg=evaluation,
            evaluation_env=True,
        )

    whole = step_trainer("whole")
    for _ in range(calls):
        whole.train()
    path = whole.save()
    for _ in range(calls):
        whole.train()
    resumed = step_trainer("resumed")
    resumed.restore(path)
    assert resumed.last_evaluation["timestep"] == calls
    for _ in range(calls):
        resumed.train()
    assert resumed.last_evaluation["timestep"] == 2 * calls
    assert resumed.last_evaluation == whole.last_evaluation
    assert arrays_equal(parameters(whole), parameters(resumed))
