"""Data-parallel JAX runs (two processes, CPU collectives over gloo): started by the launcher, the update of two
processes equals the single-process update of all their data, merged RunningStandardScaler statistics are those of
the concatenated data, parameters stay bit-identical on every process after every update with one compilation of the
update, only process 0 writes files; a process that raises ends the run within seconds; the launcher's argument
errors."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from distributed_helpers import clean_environment, distributed, free_port, jax_variables, run_ranks

from skrl_like.jax.utils import distributed as launcher

WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jax_distributed_worker.py")


def load_ranks(directory):
    return [dict(np.load(os.path.join(directory, f"rank{rank}.npz"))) for rank in range(2)]


@distributed
def test_two_processes_started_by_the_launcher_learn_as_one_with_all_their_data_and_stay_identical(tmp_path):
    import jax_distributed_worker as worker

    command = [
        sys.executable,
        "-m",
        "skrl_like.jax.utils.distributed",
        "--nnodes",
        "1",
        "--nproc-per-node",
        "2",
        "--coordinator-address",
        f"127.0.0.1:{free_port()}",
        WORKER,
        "learn",
        str(tmp_path),
    ]
    # a session of its own: at the timeout the launcher and its processes are ended together
    launched = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=clean_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = launched.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(launched.pid, signal.SIGKILL)
        output, _ = launched.communicate()
    assert launched.returncode == 0, output[-6000:]
    first, second = load_ranks(tmp_path)
    assert first.keys() == second.keys()

    # one update: bit-identical on both processes and equal to the single-process update of the whole rollout
    reference = worker.ppo_update(slice(None))
    for key, value in reference.items():
        assert np.array_equal(first[f"update/{key}"], second[f"update/{key}"]), key
        np.testing.assert_allclose(first[f"update/{key}"], value, rtol=0, atol=1e-6, err_msg=key)
    assert first["update/learning_rate"] != 1e-2  # adapted to the processes' mean KL, as the reference's

    # the scaler's statistics (functional and host side): a prior of (mean 0, variance 1, count 1) merged with the
    # concatenated rows
    rows = worker.hand_made_scaler_rows().astype(np.float64)
    count, mean, variance = len(rows), rows.mean(0), rows.var(0, ddof=1)
    total = 1 + count
    expected_variance = (1.0 + variance * count + mean**2 * count / total) / total
    for form in ("functional", "host"):
        np.testing.assert_allclose(first[f"scaler/{form}/running_mean"], mean * count / total, rtol=1e-5)
        np.testing.assert_allclose(first[f"scaler/{form}/running_variance"], expected_variance, rtol=1e-5)
        assert first[f"scaler/{form}/current_count"].item() == total
        for name in ("running_mean", "running_variance", "current_count"):
            assert np.array_equal(first[f"scaler/{form}/{name}"], second[f"scaler/{form}/{name}"])

    # training runs: the parameters changed, were bit-identical on both processes after every update, and the
    # update compiled once
    assert first["ppo"].shape[0] == 4
    assert not np.array_equal(first["ppo"][0], first["ppo"][-1])
    for index in range(4):
        assert np.array_equal(first["ppo"][index], second["ppo"][index]), f"update {index}"
    assert first["ppo/compilations"] == 1
    # one all-reduce in the update (no KL threshold, no scheduler): both models' gradients of a mini-batch step
    # travel together
    assert first["ppo/all_reduces"] == 1

    # only process 0 wrote files and showed the progress bar (one bar per run)
    assert sorted(os.listdir(tmp_path)) == ["rank0", "rank0.npz", "rank1.npz"]
    run = tmp_path / "rank0" / "runs" / "ppo"
    assert any(entry.startswith("events.out.tfevents") for entry in os.listdir(run))
    assert os.listdir(run / "checkpoints")
    assert output.count(" 0/32 [") == 1  # one progress bar: rank 0's


@distributed
def test_a_process_that_raises_ends_every_process_within_seconds_with_its_error_shown(tmp_path):
    results = run_ranks(WORKER, ["raise", str(tmp_path)], str(tmp_path), jax_variables, timeout=240)
    failing, other = results[1], results[0]
    assert failing.returncode != 0 and other.returncode != 0
    assert "rank 1 fails on purpose at its second update" in failing.output
    assert "rank 1: uncaught RuntimeError" in failing.output
    # the other process ended within seconds of the failing one (not after a barrier's or collective's timeout)
    assert other.seconds - failing.seconds < 10, (failing.seconds, other.seconds, other.output[-2000:])


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--nnodes", "0", "script.py"], "--nnodes and --nproc-per-node must be >= 1"),
        (["--nnodes", "2", "--node-rank", "2", "script.py"], "--node-rank must be in [0, 1] for --nnodes 2, got 2"),
        (["--coordinator-address", "localhost", "script.py"], "--coordinator-address must be host:port"),
    ],
)
def test_the_launcher_rejects_bad_arguments_with_the_fix(arguments, message, capsys):
    with pytest.raises(SystemExit) as error:
        launcher.main(arguments)
    assert error.value.code == 2
    assert message in capsys.readouterr().err


def test_the_launcher_gives_each_process_its_rank_and_ends_the_others_when_one_fails(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import os, sys, time\n"
        "rank = int(os.environ['JAX_RANK'])\n"
        "names = ('JAX_RANK', 'JAX_LOCAL_RANK', 'JAX_WORLD_SIZE', 'JAX_COORDINATOR_ADDR', 'JAX_COORDINATOR_PORT')\n"
        "with open(f'variables{rank}', 'w') as file:\n"
        "    file.write(' '.join([os.environ[name] for name in names] + sys.argv[1:]))\n"
        "if rank == 2:\n    time.sleep(1)\n    sys.exit(3)\n"
        "time.sleep(60)\n"
    )
    command = [sys.executable, "-m", "skrl_like.jax.utils.distributed", "--nnodes", "2", "--node-rank", "1"]
    command += ["--nproc-per-node", "2", "--coordinator-address", "10.0.0.1:6000", str(script), "--flag", "x"]
    ended = subprocess.run(command, cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, timeout=30)
    assert ended.returncode == 3  # the failing process's code, without waiting for the sleeping one
    assert (tmp_path / "variables2").read_text() == "2 0 4 10.0.0.1 6000 --flag x"
    assert (tmp_path / "variables3").read_text() == "3 1 4 10.0.0.1 6000 --flag x"
