import os

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from skrl_like.core.io import atomic_write
from skrl_like.core.tensorboard import SummaryWriter


def test_written_scalars_are_read_back_by_tensorboard(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    for step, value in [(10, 1.5), (20, -2.0)]:
        writer.add_scalar("Loss / Policy loss", value, step)
    writer.close()
    accumulator = EventAccumulator(str(tmp_path))
    accumulator.Reload()
    events = accumulator.Scalars("Loss / Policy loss")
    assert [(e.step, e.value) for e in events] == [(10, 1.5), (20, -2.0)]


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "agent.pt"
    atomic_write(str(path), lambda f: f.write(b"old"))

    def failing(file):
        file.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(str(path), failing)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["agent.pt"]  # no temporary file left behind
