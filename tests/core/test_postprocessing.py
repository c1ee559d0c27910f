"""skrl_like.utils.postprocessing: TensorBoard files written by the agents' writer and memory files read back."""

import numpy as np
import pytest

from skrl_like.core.tensorboard import SummaryWriter
from skrl_like.utils.postprocessing import MemoryFileIterator, TensorboardFileIterator


def test_tensorboard_files_read_back_per_run_and_tag(tmp_path):
    for run, scale in (("run_a", 1.0), ("run_b", 2.0)):
        writer = SummaryWriter(str(tmp_path / run))
        for step in (10, 20, 30):
            writer.add_scalar("Reward / Total reward (mean)", scale * step / 4, step)
            writer.add_scalar("Loss / Policy loss", -scale, step)
        writer.close()
    items = list(TensorboardFileIterator(str(tmp_path / "*" / "events.out.tfevents.*"), "Reward / Total reward (mean)"))
    assert items == [
        ("run_a", {"Reward / Total reward (mean)": [[10, 2.5], [20, 5.0], [30, 7.5]]}),
        ("run_b", {"Reward / Total reward (mean)": [[10, 5.0], [20, 10.0], [30, 15.0]]}),
    ]
    name, data = next(iter(TensorboardFileIterator(str(tmp_path / "run_b" / "*"), ["Loss / Policy loss", "absent"])))
    assert (name, data) == ("run_b", {"Loss / Policy loss": [[10, -2.0], [20, -2.0], [30, -2.0]]})


def test_a_torn_event_file_yields_no_data(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.out.tfevents.1.host").write_bytes(b"\x00" * 7)
    assert list(TensorboardFileIterator(str(tmp_path / "run" / "*"), "x")) == [("run", {})]


def test_memory_files_npz_and_csv(tmp_path):
    states = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    np.savez(tmp_path / "a_memory.npz", states=states)
    (tmp_path / "b_memory.csv").write_text("states.0,states.1,terminated.0\n0.5,1.5,False\n2.0,-1.0,True\n")
    (tmp_path / "c_memory.csv").write_text("states,x\n1,2\n")
    files = list(MemoryFileIterator(str(tmp_path / "*_memory.*")))
    assert [name for name, _ in files] == ["a_memory.npz", "b_memory.csv", "c_memory.csv"]
    np.testing.assert_array_equal(files[0][1]["states"], states)
    # skrl's quirk, kept: "False" reads as True
    assert files[1][1] == {"states": [[0.5, 1.5], [2.0, -1.0]], "terminated": [[True], [True]]}
    assert files[2][1] == {}  # a header that is not <name>.<index>
    (tmp_path / "d_memory.txt").write_text("")
    with pytest.raises(ValueError, match="Unsupported memory file .*d_memory.txt.*give .pt, .npz or .csv"):
        list(MemoryFileIterator(str(tmp_path / "d_memory.*")))


# -- plot labels and smoothing -----------------------------------------------------------------------------------


def fake_run(folder, backend="torch", agent="PPO", env="CartPole-v1", seed=42, returns=(1.0, 2.0, 3.0, 4.0)):
    """A run directory as ``skrl_like train`` writes it: params.json, config.yaml and results.jsonl."""
    import json

    folder.mkdir(parents=True)
    params = {"trainer": {"backend": backend}, "env": {"id": env, "num_envs": 1}, "agents": [{"class": agent}]}
    (folder / "params.json").write_text(json.dumps(params))
    (folder / "config.yaml").write_text(f"seed: {seed}\nenv:\n  id: {env}\n  num_envs: 1\nagent:\n  class: {agent}\n")
    rows = [{"timestep": 10 * (i + 1), "Reward / Total reward (mean)": value} for i, value in enumerate(returns)]
    (folder / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(folder)


def test_run_labels_name_what_differs_between_runs(tmp_path):
    from skrl_like.utils.postprocessing import run_labels

    same_name = "26-11-27_12-00-00-000000_PPO"  # what every `skrl_like train --agent PPO` run is called
    torch_run = fake_run(tmp_path / "a" / same_name, backend="torch")
    jax_run = fake_run(tmp_path / "b" / same_name, backend="jax")
    assert run_labels([torch_run, jax_run]) == ["torch", "jax"]

    seeds = [fake_run(tmp_path / f"s{seed}" / same_name, seed=seed) for seed in (0, 7)]
    assert run_labels(seeds) == ["seed 0", "seed 7"]
    mixed = fake_run(tmp_path / "m" / same_name, backend="jax", agent="A2C", seed=7)
    assert run_labels([seeds[0], mixed]) == ["torch, PPO, seed 0", "jax, A2C, seed 7"]

    twins = [fake_run(tmp_path / folder / "run" / same_name) for folder in ("first", "second")]
    assert run_labels(twins) == [f"first/run/{same_name}", f"second/run/{same_name}"]  # nothing differs: the path
    assert run_labels([torch_run]) == [same_name]
    skrl_run = tmp_path / "skrl" / same_name  # written by skrl: no params.json, no config.yaml
    skrl_run.mkdir(parents=True)
    assert run_labels([torch_run, str(skrl_run)]) == [f"a/{same_name}", f"skrl/{same_name}"]
    assert run_labels([torch_run, jax_run, str(skrl_run)]) == ["torch", "jax", f"skrl/{same_name}"]


def test_smooth_is_a_trailing_moving_average():
    from skrl_like.utils.postprocessing import smooth

    np.testing.assert_allclose(smooth([1.0, 2.0, 6.0, 3.0, 9.0], 3), [1.0, 1.5, 3.0, 11 / 3, 6.0])
    np.testing.assert_array_equal(smooth([1.0, 5.0], 1), [1.0, 5.0])
    np.testing.assert_allclose(smooth([2.0, 4.0], 10), [2.0, 3.0])
    for window in (0, 2.5, True):
        with pytest.raises(ValueError, match="smoothing window must be an int >= 1"):
            smooth([1.0], window)


def test_plot_labels_and_smooths_the_curves(tmp_path, monkeypatch, capsys):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    from skrl_like import cli

    drawn = []
    original = Axes.plot
    monkeypatch.setattr(
        Axes, "plot", lambda self, x, y, **kw: drawn.append((kw["label"], list(y))) or original(self, x, y, **kw)
    )
    runs = [fake_run(tmp_path / backend / "same_PPO", backend=backend) for backend in ("torch", "jax")]
    assert cli.main(["plot", *runs, "--smooth", "2", "-o", str(tmp_path / "plot.png")]) == 0
    assert drawn == [("torch", [1.0, 1.5, 2.5, 3.5]), ("jax", [1.0, 1.5, 2.5, 3.5])]
    assert (tmp_path / "plot.png").stat().st_size > 0
    assert cli.main(["plot", runs[0], "--smooth", "0"]) == 2
    assert "--smooth must be a number of points >= 1" in capsys.readouterr().err
