"""Atomic file writes: a checkpoint is either the old file or the complete new one, never a torn one."""

import os
import tempfile
from typing import BinaryIO, Callable


def atomic_write(path: str, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` through ``write(file)`` into a temporary file in the same folder, then rename it."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(prefix=".tmp_", suffix=os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        raise
