"""skrl_like.tune: the Ray Tune Trainable (config overrides, exact save/restore, a learning-rate sweep on local Ray)."""

import json
import os
import re

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.tune")
pytest.importorskip("torch")

from skrl_like.core.runner import RunnerConfigError, read_yaml  # noqa: E402
from skrl_like.tune import make_trainable, override  # noqa: E402

pytestmark = pytest.mark.tune

TUNED = os.path.join(os.path.dirname(__file__), "..", "..", "skrl_like", "tuned", "ppo_cartpole.yaml")
VOLATILE = ("wall_time", "env_steps_per_second")  # per-row timings: the only values that differ between equal runs


def description(num_envs=2):
    cfg = read_yaml(TUNED)
    cfg["env"]["num_envs"] = num_envs
    cfg["agent"]["rollouts"] = 32
    return cfg


@pytest.fixture
def trial(tmp_path, monkeypatch):
    """Make a trial outside Tune: its directory goes under ``tmp_path`` (not ~/ray_results)."""
    import ray.tune.trainable.trainable as module

    monkeypatch.setattr(module, "DEFAULT_STORAGE_PATH", str(tmp_path))
    return lambda trainable_class, config: trainable_class(config=config)


def parameters(trainable):
    """``{role.name: NumPy copy}`` of every model parameter (torch state dicts, JAX parameter trees)."""
    found = {}
    for role, model in trainable.agent.models.items():
        if hasattr(model, "named_parameters"):
            found.update(
                {f"{role}.{name}": value.detach().numpy().copy() for name, value in model.state_dict().items()}
            )
        else:
            import jax

            leaves = jax.tree_util.tree_leaves_with_path(model.state_dict.params)
            found.update({f"{role}.{jax.tree_util.keystr(path)}": np.array(value) for path, value in leaves})
    return found


def assert_same_parameters(first, second):
    assert first.keys() == second.keys()
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)


def test_override_sets_dotted_keys_and_rejects_unknown_sections():
    cfg = override(description(), {"agent.learning_rate": 3e-4, "env.num_envs": 4, "seed": 7, "ratio_clip": 0.1})
    assert (cfg["agent"]["learning_rate"], cfg["env"]["num_envs"], cfg["seed"]) == (3e-4, 4, 7)
    assert cfg["agent"]["ratio_clip"] == 0.1  # a bare key is an agent key, as in apply_overrides
    assert cfg["agent"]["mini_batches"] == 4  # the rest of the description is kept
    with pytest.raises(RunnerConfigError, match=r"'agnet' is not a section .* write e.g. 'agent.learning_rate'"):
        override(description(), {"agnet.learning_rate": 1e-3})
    with pytest.raises(RunnerConfigError, match=r"'agent.learning_rate' is a value, not a section"):
        override(description(), {"agent.learning_rate.value": 1e-3})
    with pytest.raises(RunnerConfigError, match="timesteps_per_iteration must be >= 1"):
        make_trainable(description(), timesteps_per_iteration=0)


def test_step_continues_the_run_and_reports_the_iteration(trial):
    trainable = trial(make_trainable(description(), timesteps_per_iteration=64), {"agent.learning_rate": 3e-4})
    first, second = trainable.step(), trainable.step()
    assert (first["timesteps_total"], second["timesteps_total"]) == (64, 128)
    assert (first["env_steps_total"], second["env_steps_total"]) == (128, 256)
    assert second["episode_return_mean"] > 0 and second["env_steps_per_second"] > 0
    assert "Loss / Policy loss" in second
    assert trainable.agent.cfg["learning_rate"] == 3e-4
    assert trainable.agent.optimizer.param_groups[0]["lr"] == 3e-4
    rows = [json.loads(line) for line in open(os.path.join(trainable.logdir, "run", "results.jsonl"))]
    assert [row["timestep"] for row in rows] == [64, 128]  # one row per iteration, at its end
    trainable.stop()


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_restored_trial_equals_the_donor(trial, tmp_path, backend):
    """A checkpoint restored into a new trial (a resume, or a PBT exploit) gives the donor's parameters bit for bit,
    and the next iteration is the donor's next iteration."""
    if backend == "jax":
        pytest.importorskip("flax")
    trainable_class = make_trainable(description(), backend=backend, timesteps_per_iteration=64)
    donor = trial(trainable_class, {"agent.learning_rate": 3e-4})
    donor.step()
    os.makedirs(tmp_path / "checkpoint")
    checkpoint = donor.save_checkpoint(str(tmp_path / "checkpoint"))
    at_checkpoint = parameters(donor)
    donor_next = donor.step()
    donor_after = parameters(donor)

    recipient = trial(trainable_class, {"agent.learning_rate": 3e-4})
    fresh = parameters(recipient)
    assert not all(np.array_equal(fresh[name], at_checkpoint[name]) for name in fresh)  # the same seed, not trained
    recipient.load_checkpoint(checkpoint)
    assert_same_parameters(parameters(recipient), at_checkpoint)
    recipient_next = recipient.step()
    assert_same_parameters(parameters(recipient), donor_after)
    for result in (donor_next, recipient_next):
        for key in VOLATILE:
            result.pop(key)
    np.testing.assert_equal(recipient_next, donor_next)  # losses, returns, counters (NaN equals NaN here)
    donor.stop()
    recipient.stop()


def steps_from(parameters_now, start):
    return {name: parameters_now[name] - start[name] for name in start}


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_pbt_exploit_steps_at_the_mutated_learning_rate(trial, tmp_path, backend):
    """PBT's exploit: the donor's checkpoint restored into a trial whose config is the donor's with the learning rate
    mutated (a new actor: setup, then load_checkpoint; a reused one: reset_config, then load_checkpoint). The
    exploited trial's next optimizer step is the donor's next step scaled by the mutation."""
    if backend == "jax":
        pytest.importorskip("flax")
    run = description()
    run["agent"].update(rollouts=16, learning_epochs=1, mini_batches=1)  # one iteration: one optimizer step
    trainable_class = make_trainable(run, backend=backend, timesteps_per_iteration=16)
    donor = trial(trainable_class, {"agent.learning_rate": 3e-4})
    donor.step()
    os.makedirs(tmp_path / "checkpoint")
    checkpoint = donor.save_checkpoint(str(tmp_path / "checkpoint"))
    at_checkpoint = parameters(donor)
    donor.step()
    donor_steps = steps_from(parameters(donor), at_checkpoint)
    assert max(np.abs(step).max() for step in donor_steps.values()) > 1e-5

    def assert_mutated_steps(exploited):
        assert_same_parameters(parameters(exploited), at_checkpoint)
        exploited.step()
        assert exploited.agent.cfg["learning_rate"] == 7.5e-4
        for name, step in steps_from(parameters(exploited), at_checkpoint).items():
            np.testing.assert_allclose(step, 2.5 * donor_steps[name], rtol=1e-3, atol=3e-7, err_msg=name)

    exploited = trial(trainable_class, {"agent.learning_rate": 7.5e-4})
    exploited.load_checkpoint(checkpoint)
    assert_mutated_steps(exploited)
    exploited.stop()
    assert donor.reset_config({"agent.learning_rate": 7.5e-4})
    donor.load_checkpoint(checkpoint)
    assert_mutated_steps(donor)
    donor.stop()


def test_a_resumed_trial_keeps_its_adapted_learning_rate(trial, tmp_path):
    # the same config (a pause and resume, or an exploit that did not mutate the rate): the checkpoint's rate, here
    # the one KLAdaptiveLR adapted, not the config's initial one
    run = description()
    run["agent"].update(rollouts=16, learning_epochs=1, mini_batches=1, learning_rate_scheduler="KLAdaptiveLR")
    trainable_class = make_trainable(run, timesteps_per_iteration=16)
    donor = trial(trainable_class, {"agent.learning_rate": 3e-4})
    donor.step()
    os.makedirs(tmp_path / "checkpoint")
    checkpoint = donor.save_checkpoint(str(tmp_path / "checkpoint"))
    adapted = donor.agent.optimizer.param_groups[0]["lr"]
    assert adapted == pytest.approx(3e-4 * 1.5)  # a KL of 0 (one mini-batch, evaluated before its step)
    resumed = trial(trainable_class, {"agent.learning_rate": 3e-4})
    resumed.load_checkpoint(checkpoint)
    assert resumed.agent.optimizer.param_groups[0]["lr"] == adapted
    donor.stop()
    resumed.stop()


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    import ray

    # the workers' HOME: a trial started outside a Tuner (validate_save_restore) writes under ~/ray_results
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("ray_home")))  # the workers inherit it
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_validate_save_restore(local_ray):
    from ray.tune.utils import validate_save_restore

    trainable_class = make_trainable(description(), timesteps_per_iteration=32)
    assert validate_save_restore(trainable_class, config={"agent.learning_rate": 1e-3})


def test_learning_rate_sweep_on_local_ray(local_ray, tmp_path):
    from ray import tune

    rates = [1e-4, 3e-4, 1e-3, 3e-3]
    tuner = tune.Tuner(
        make_trainable(description(num_envs=4), timesteps_per_iteration=64),
        param_space={"agent.learning_rate": tune.grid_search(rates)},
        tune_config=tune.TuneConfig(metric="episode_return_mean", mode="max"),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            stop={"training_iteration": 2},
            checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True),
            sync_config=tune.SyncConfig(sync_artifacts=True),  # the trials' run directories into storage_path
            verbose=0,
        ),
    )
    results = tuner.fit()
    assert results.num_errors == 0 and len(results) == 4
    assert sorted(result.config["agent.learning_rate"] for result in results) == rates
    for result in results:
        assert result.metrics["training_iteration"] == 2 and result.metrics["timesteps_total"] == 128
        assert np.isfinite(result.metrics["episode_return_mean"])
        # the override reached the agent that trained: the run directory's params.json
        params = json.load(open(os.path.join(result.path, "run", "params.json")))
        assert params["agents"][0]["cfg"]["learning_rate"] == result.config["agent.learning_rate"]
    best = results.get_best_result()
    assert best.checkpoint is not None and os.path.isfile(os.path.join(best.checkpoint.path, "run.ckpt"))


BAD_SWEEPS = [
    (
        "run: ppo_cartpole\nparam_spcae: {}\n",
        r"Unknown key in the sweep file .*: 'param_spcae'. Did you mean 'param_space'\?",
    ),
    ("param_space: {}\n", r"The sweep needs 'run'"),
    ("run: no_such_run\n", r"run: No configuration file 'no_such_run'"),
    ("run: ppo_cartpole\nparam_space: {agent.learning_rate: {logunifrom: [1, 2]}}\n", r"Did you mean 'loguniform'\?"),
    ("run: ppo_cartpole\nparam_space: {agent.learning_rate: {loguniform: [0, 1]}}\n", r"needs low > 0"),
    ("run: ppo_cartpole\nparam_space: {agent.learning_rate: {uniform: [2, 1]}}\n", r"\[low, high\] with low < high"),
    ("run: ppo_cartpole\nscheduler: hyperband\n", r"Unknown scheduler 'hyperband'.* Valid: fifo, asha, pbt"),
    ("run: ppo_cartpole\nsamples: 0\n", r"samples must be an int >= 1, got 0"),
    ("run: ppo_cartpole\nresources: {cpus: 1}\n", r"resources must be a mapping with cpu and/or gpu"),
]


@pytest.mark.parametrize("text, message", BAD_SWEEPS)
def test_bad_sweep_files_fail_with_one_line_and_exit_2(tmp_path, capsys, text, message):
    from skrl_like import cli

    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    assert cli.main(["tune", "-f", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("skrl_like tune: error: ")
    assert re.search(message, error), error


def test_tune_command_runs_a_sweep(local_ray, tmp_path, capsys):
    from skrl_like import cli

    run = description()
    run["env"]["num_envs"] = 2
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    (tmp_path / "sweep.yaml").write_text(
        "run: run.yaml\ntimesteps_per_iteration: 32\niterations: 2\nscheduler: fifo\n"
        "param_space:\n  agent.learning_rate: {choice: [1.0e-4, 1.0e-3]}\n  seed: {grid: [1, 2]}\n"
    )
    assert cli.main(["tune", "-f", str(tmp_path / "sweep.yaml"), "--storage", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("trial  agent.learning_rate  seed  episode_return_mean  iterations  status") + 1 :]
    assert len([line for line in table if line.endswith("  2  done")]) == 2
    assert sorted(line.split("  ")[2] for line in table[:2]) == ["1", "2"]
    checkpoint = lines[-1].removeprefix("best checkpoint: ")
    assert checkpoint.startswith(str(tmp_path / "out")) and os.path.isfile(os.path.join(checkpoint, "run.ckpt"))


def test_schedulers_from_sweep_entries():
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, PopulationBasedTraining

    from skrl_like.tune import SweepConfigError, make_scheduler

    space = {"agent.learning_rate": {"loguniform": [1e-4, 1e-2]}, "seed": {"grid": [1, 2]}, "agent.rollouts": 16}
    assert isinstance(make_scheduler(None, space), FIFOScheduler)
    assert isinstance(make_scheduler({"name": "ASHA", "grace_period": 2}, space), ASHAScheduler)
    pbt = make_scheduler({"name": "pbt", "perturbation_interval": 2}, space)
    assert isinstance(pbt, PopulationBasedTraining)
    assert list(pbt._hyperparam_mutations) == ["agent.learning_rate"]  # grids and constants are not mutated
    with pytest.raises(SweepConfigError, match="scheduler asha: .*grace_periods"):
        make_scheduler({"name": "asha", "grace_periods": 2}, space)
