import os
import stat
import time

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


def _leave_temporary(directory, name, age_seconds=3600.0):
    """What a save killed mid-write leaves: a partial temporary file, last modified ``age_seconds`` ago."""
    path = directory / name
    path.write_bytes(b"partial")
    old = time.time() - age_seconds
    os.utime(path, (old, old))
    return path


def test_a_save_removes_the_temporaries_that_killed_saves_left_in_its_folder(tmp_path):
    # before: every killed save left its .tmp_* file for ever (62 MB after 24 kills)
    _leave_temporary(tmp_path, ".tmp_skrl_0123abcd_agent_10.pt")  # another checkpoint of the same run
    _leave_temporary(tmp_path, ".tmp_skrl_89abcdef_agent_20.pt")  # this very target
    _leave_temporary(tmp_path, ".tmp_k2j_x9q0agent_20.pt")  # tempfile.mkstemp's name, earlier versions
    keep = [
        ".tmp_skrl_notours_agent_10.pt",  # not our pattern: 8 hex digits, "_", then the target name
        ".tmp_k2j_x9q0agent_10.pt",  # an earlier version's name, but for another target: not provably ours
        ".tmp_notes",  # someone else's
        "agent_10.pt",
    ]
    for name in keep:
        _leave_temporary(tmp_path, name)
    atomic_write(str(tmp_path / "agent_20.pt"), lambda f: f.write(b"new"))
    assert sorted(os.listdir(tmp_path)) == sorted(keep + ["agent_20.pt"])
    assert (tmp_path / "agent_20.pt").read_bytes() == b"new"


def test_a_save_keeps_temporaries_that_may_still_be_written(tmp_path):
    recent = _leave_temporary(tmp_path, ".tmp_skrl_0123abcd_agent_10.pt", age_seconds=1.0)
    locked = _leave_temporary(tmp_path, ".tmp_skrl_4567abcd_agent_10.pt")
    fcntl = pytest.importorskip("fcntl")
    with open(locked, "rb") as writer:  # a live writer holds the lock of its temporary file
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)
        atomic_write(str(tmp_path / "agent_20.pt"), lambda f: f.write(b"new"))
        assert recent.exists() and locked.exists()
    atomic_write(str(tmp_path / "agent_20.pt"), lambda f: f.write(b"newer"))
    assert recent.exists() and not locked.exists()  # its writer is gone; the recent one is still too young


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_written_files_get_the_default_permissions_of_the_umask(tmp_path, umask):
    # before: tempfile.mkstemp's 0o600 whatever the umask, so a shared group could not read the checkpoints
    previous = os.umask(umask)
    try:
        atomic_write(str(tmp_path / "agent.pt"), lambda f: f.write(b"new"))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "agent.pt").st_mode) == 0o666 & ~umask
