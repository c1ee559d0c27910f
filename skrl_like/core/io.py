"""Atomic file writes: a checkpoint is either the old file or the complete new one, never a torn one.

A write goes to a temporary file ``.tmp_skrl_<8 hex digits>_<name>`` in the target's folder, created with the
user's default permissions (``0o666`` less the umask, as ``open`` gives), and is renamed over the target once
complete. A process killed mid-write leaves its temporary file behind, so every write first removes the leftovers
in its folder: files named by that pattern (or the ``.tmp_<8 characters><name>`` pattern of earlier versions, for
the same target only) that were last modified more than :data:`STALE_AFTER_SECONDS` ago and that no live writer
holds. A trainer also removes the leftovers of its run directory when a training loop starts and ends
(:func:`remove_leftover_temporaries`: unlocked, whatever their age past a second). A writer holds an advisory lock
(``flock``) on its temporary file while writing; a process that dies releases it. Where ``flock`` is unavailable
(Windows), removing a file another process has open fails, which keeps it.
"""

import os
import re
import secrets
import time
from typing import BinaryIO, Callable

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

TEMPORARY_PREFIX = ".tmp_skrl_"
# a leftover younger than this is kept whatever its lock says: it may be a write between creating and locking
STALE_AFTER_SECONDS = 60.0
# at a run's start and end (remove_leftover_temporaries): past the instant between creating a file and locking it
LEFTOVER_AFTER_SECONDS = 1.0

_OURS = re.compile(re.escape(TEMPORARY_PREFIX) + r"[0-9a-f]{8}_.+")
_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def atomic_write(path: str, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` through ``write(file)`` into a temporary file in the same folder, then rename it.

    Stale temporary files of killed writes in that folder are removed first (see the module docstring).
    """
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    os.makedirs(directory, exist_ok=True)
    remove_stale_temporaries(directory, name)
    fd, tmp_path = _create_temporary(directory, name)
    try:
        with os.fdopen(fd, "wb") as file:
            _try_lock(file.fileno())
            write(file)
            file.flush()
            os.fsync(file.fileno())
        # unlocked now, but just modified: too young for a cleaner to take before the rename
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        raise


def remove_stale_temporaries(directory: str, name: str, min_age: float = STALE_AFTER_SECONDS) -> list[str]:
    """Remove the temporary files that killed writes left in ``directory`` (``name``: the target being written;
    ``""``: this module's temporaries of any target).

    :param min_age: seconds since a file's last change before it may be removed (see the module docstring).
    :return: the names of the files removed.
    """
    # tempfile.mkstemp's names (earlier versions), for the target being written only
    legacy = re.compile(r"\.tmp_[a-z0-9_]{8}" + re.escape(name)) if name else None
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    removed = []
    now = time.time()
    for entry in entries:
        if not (_OURS.fullmatch(entry) or (legacy is not None and legacy.fullmatch(entry))):
            continue
        candidate = os.path.join(directory, entry)
        try:
            if now - os.stat(candidate).st_mtime < min_age:
                continue
            if _remove_if_unused(candidate):
                removed.append(entry)
        except OSError:  # gone already (another process cleaned it), not ours to remove, or in use (Windows)
            continue
    return removed


def remove_leftover_temporaries(directory: str) -> list[str]:
    """At the start and end of a run: remove every temporary file of a killed write in ``directory`` that no live
    writer holds, however recent (a second old at least: older than the instant between creating and locking one),
    so a run that finishes within :data:`STALE_AFTER_SECONDS` leaves none behind.

    :return: the names of the files removed.
    """
    return remove_stale_temporaries(directory, "", min_age=LEFTOVER_AFTER_SECONDS)


def _create_temporary(directory: str, name: str) -> tuple[int, str]:
    # os.open with mode 0o666 lets the umask decide the permissions (tempfile.mkstemp forces 0o600)
    while True:
        tmp_path = os.path.join(directory, f"{TEMPORARY_PREFIX}{secrets.token_hex(4)}_{name}")
        try:
            return os.open(tmp_path, _OPEN_FLAGS, 0o666), tmp_path
        except FileExistsError:
            continue


def _try_lock(fd: int) -> None:
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a file system without locks: the age rule alone protects this write
        pass


def _remove_if_unused(path: str) -> bool:
    if fcntl is None:
        os.remove(path)  # raises PermissionError while a writer has it open
        return True
    with open(path, "rb") as file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a live writer holds it
            return False
        except OSError:  # no locks on this file system: old enough is all we can know
            pass
        os.remove(path)
    return True
