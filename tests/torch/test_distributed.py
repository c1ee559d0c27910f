"""Data-parallel torch runs (two gloo processes with torchrun's variables): the update of two ranks equals the
single-process update of all their data, merged RunningStandardScaler statistics are those of the concatenated data,
parameters stay bit-identical on every rank after every update, only rank 0 writes files, and a rank that raises ends
the run within seconds."""

import os

import numpy as np
import torch
from distributed_helpers import check_all_succeeded, distributed, run_ranks, torch_variables

WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch_distributed_worker.py")


def load_ranks(directory):
    return [torch.load(os.path.join(directory, f"rank{rank}.pt"), weights_only=False) for rank in range(2)]


def flatten(state: dict) -> dict:
    flat = {}
    for key, value in state.items():
        if isinstance(value, dict):
            flat.update({f"{key}/{name}": tensor for name, tensor in flatten(value).items()})
        else:
            flat[key] = value
    return flat


@distributed
def test_two_ranks_learn_as_one_process_with_all_their_data_and_stay_identical(tmp_path):
    import torch_distributed_worker as worker

    results = run_ranks(WORKER, ["learn", str(tmp_path)], str(tmp_path), torch_variables)
    check_all_succeeded(results)
    first, second = load_ranks(tmp_path)

    # one update: bit-identical on both ranks (parameters, scaler statistics, the adapted learning rate) and equal
    # to the single-process update of the whole rollout (4 environments; each rank held 2)
    update, other = flatten(first["update"]), flatten(second["update"])
    assert update.keys() == other.keys()
    for key in update:
        assert torch.equal(torch.as_tensor(update[key]), torch.as_tensor(other[key])), key
    reference = flatten(worker.ppo_update(slice(None)))
    assert reference.keys() == update.keys()
    for key, value in reference.items():
        np.testing.assert_allclose(np.asarray(update[key]), np.asarray(value), rtol=0, atol=1e-6, err_msg=key)
    assert update["learning_rate"] != 1e-2  # the scheduler adapted it to the ranks' mean KL, as to the reference's

    # the scaler's statistics: a prior of (mean 0, variance 1, count 1) merged with the concatenated rows
    rows = worker.hand_made_scaler_rows().astype(np.float64)
    count, mean, variance = len(rows), rows.mean(0), rows.var(0, ddof=1)
    total = 1 + count
    np.testing.assert_allclose(first["scaler"]["running_mean"].numpy(), mean * count / total, rtol=1e-6)
    expected_variance = (1.0 + variance * count + mean**2 * count / total) / total
    np.testing.assert_allclose(first["scaler"]["running_variance"].numpy(), expected_variance, rtol=1e-6)
    assert first["scaler"]["current_count"].item() == total
    for name in ("running_mean", "running_variance", "current_count"):
        assert torch.equal(first["scaler"][name], second["scaler"][name]), name

    # training runs: the parameters changed, and were bit-identical on both ranks after every update
    for name, updates in (("ppo", 4), ("sac", 12)):
        assert first[name].shape[0] == updates, name
        assert not torch.equal(first[name][0], first[name][-1]), name
        for index in range(updates):
            assert torch.equal(first[name][index], second[name][index]), f"{name}: update {index}"

    # only rank 0 wrote files and showed the progress bar
    assert os.listdir(tmp_path / "rank1") == []
    for name in ("ppo", "sac"):
        run = tmp_path / "rank0" / "runs" / name
        assert any(entry.startswith("events.out.tfevents") for entry in os.listdir(run)), name
        assert os.listdir(run / "checkpoints"), name
    assert "it/s" in results[0].output and "it/s" not in results[1].output


@distributed
def test_a_rank_that_raises_ends_every_rank_within_seconds_with_its_error_shown(tmp_path):
    results = run_ranks(WORKER, ["raise", str(tmp_path)], str(tmp_path), torch_variables, timeout=60)
    failing, other = results[1], results[0]
    assert failing.returncode != 0 and other.returncode != 0
    assert "rank 1 fails on purpose at its second update" in failing.output
    assert "rank 1: uncaught RuntimeError" in failing.output
    # the other rank ended within seconds of the failing one (not at the timeout of its collective)
    assert other.seconds - failing.seconds < 10, (failing.seconds, other.seconds, other.output[-2000:])
