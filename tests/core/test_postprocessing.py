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
