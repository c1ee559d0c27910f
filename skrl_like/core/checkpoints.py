"""Full-state run checkpoints: one file that resumes a run exactly, written once here for both backends.

A run checkpoint holds everything a trainer needs to continue as if never stopped: every agent's
:meth:`~skrl_like.core.agents.base.AgentCore.run_state` (models, optimizers, learning-rate schedulers, preprocessors,
key streams, counters, tracking and, where switched on, memory contents), the trainer's timestep and current
observations, the environment's own state where it can be saved, and the process's random states (Python, NumPy
and the backend's). It is a pickle (protocol 4) of one dict, written atomically
(:func:`~skrl_like.core.io.atomic_write`) as ``<experiment_dir>/checkpoints/run_<timestep>.ckpt``; the best one is
also kept as ``run_best.ckpt``.

skrl's per-agent files (``agent_<timestep>.pt``/``.pickle``, read by ``agent.load``) are written beside them as
before: they hold the modules only.
"""

import os
import pickle
import re
from typing import Any, Dict, List, Optional

from skrl_like.core.io import atomic_write

FORMAT = "skrl_like run checkpoint"
VERSION = 1
PREFIX = "run_"
EXTENSION = ".ckpt"
BEST_NAME = f"{PREFIX}best{EXTENSION}"

_NUMBERED = re.compile(re.escape(PREFIX) + r"(\d+)" + re.escape(EXTENSION))


class CheckpointMismatchError(ValueError):
    """A run checkpoint that cannot be loaded into this trainer: corrupt, another format, or another set-up."""


def checkpoint_path(directory: str, timestep: int) -> str:
    """The path of the run checkpoint of ``timestep`` in a ``checkpoints/`` directory."""
    return os.path.join(directory, f"{PREFIX}{int(timestep)}{EXTENSION}")


def numbered_checkpoints(directory: str) -> List[tuple]:
    """``[(timestep, path)]`` of the numbered run checkpoints in ``directory``, oldest first."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    found = []
    for entry in entries:
        match = _NUMBERED.fullmatch(entry)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, entry)))
    return sorted(found)


def _checkpoint_directory(run_dir: str) -> str:
    """``run_dir/checkpoints`` for a run directory, ``run_dir`` itself for a ``checkpoints/`` directory."""
    nested = os.path.join(run_dir, "checkpoints")
    return nested if os.path.isdir(nested) else run_dir


def find_checkpoint(run_dir: str, which: str = "last") -> str:
    """The path of a run directory's last (highest timestep) or best full-state checkpoint.

    :param run_dir: a run directory (an agent's ``experiment_dir``), its ``checkpoints/`` folder, or a checkpoint
        file (returned as it is).
    :param which: ``"last"`` or ``"best"`` (the best falls back to the last where no best was recorded).
    :raises ValueError: ``which`` is neither.
    :raises FileNotFoundError: ``run_dir`` does not exist or holds no run checkpoint.
    """
    if which not in ("last", "best"):
        raise ValueError(f"find_checkpoint: which must be 'last' or 'best', got {which!r}")
    if os.path.isfile(run_dir):
        return run_dir
    if not os.path.isdir(run_dir):
        raise FileNotFoundError(f"Run directory '{run_dir}' does not exist")
    directory = _checkpoint_directory(run_dir)
    if which == "best" and os.path.isfile(os.path.join(directory, BEST_NAME)):
        return os.path.join(directory, BEST_NAME)
    numbered = numbered_checkpoints(directory)
    if not numbered:
        raise FileNotFoundError(
            f"'{run_dir}' holds no full-state checkpoint ({PREFIX}<timestep>{EXTENSION} in {directory}): a run writes "
            "one when it ends, when it is interrupted and at every checkpoint_interval, unless "
            "cfg['experiment']['checkpoint_interval'] is 0; trainer.save() writes one on demand"
        )
    return numbered[-1][1]


def write_checkpoint(path: str, payload: Dict[str, Any]) -> None:
    """Pickle ``payload`` (with the format marker added) to ``path`` atomically."""
    payload = {"format": FORMAT, "version": VERSION, **payload}
    atomic_write(path, lambda file: pickle.dump(payload, file, protocol=4))


def copy_checkpoint(source: str, target: str) -> None:
    """Copy a checkpoint file atomically (e.g. to ``run_best.ckpt``)."""
    with open(source, "rb") as file:
        data = file.read()
    atomic_write(target, lambda file: file.write(data))


def read_checkpoint(path: str) -> Dict[str, Any]:
    """Read a run checkpoint.

    :raises FileNotFoundError: ``path`` does not exist.
    :raises CheckpointMismatchError: the file is corrupt or is not a run checkpoint (e.g. an ``agent_*.pt`` file).
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Run checkpoint '{path}' does not exist")
    with open(path, "rb") as file:
        magic = file.read(4)
    if magic.startswith(b"PK"):  # a zip archive: torch.save's format, i.e. an agent's or a model's file
        raise CheckpointMismatchError(
            f"'{path}' is not a full-state run checkpoint (written by trainer.save) but a torch.save file: a per-agent "
            "checkpoint (agent_<timestep>.pt) is loaded with agent.load(path)"
        )
    try:
        with open(path, "rb") as file:
            payload = pickle.load(file)
    except Exception as error:
        raise CheckpointMismatchError(
            f"Run checkpoint '{path}' could not be read ({type(error).__name__}: {error}): the file is corrupt or "
            "truncated; use an earlier one (find_checkpoint lists the run's checkpoints/ folder)"
        ) from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointMismatchError(
            f"'{path}' is not a full-state run checkpoint (written by trainer.save): a per-agent checkpoint "
            "(agent_<timestep>.pt/.pickle) is loaded with agent.load(path)"
        )
    if payload.get("version") != VERSION:
        raise CheckpointMismatchError(
            f"Run checkpoint '{path}' has format version {payload.get('version')}, this skrl_like reads {VERSION}"
        )
    return payload


def prune_checkpoints(directory: str, keep: int, protect: Optional[str] = None) -> List[str]:
    """Remove all but the ``keep`` newest numbered run checkpoints of ``directory`` (``keep`` 0: keep all).

    :return: the removed paths.
    """
    if keep <= 0:
        return []
    numbered = numbered_checkpoints(directory)
    removed = []
    for _, path in numbered[:-keep]:
        if path == protect:
            continue
        try:
            os.remove(path)
            removed.append(path)
        except OSError:
            pass
    return removed


# the per-agent files an agent writes at its checkpoint_interval (skrl's names; store_separately's are not pruned)
_AGENT_FILE = re.compile(r"agent_(\d+)\.(pt|pickle)")


def prune_agent_files(directory: str, keep: int) -> List[str]:
    """Remove the per-agent files ``agent_<timestep>.pt/.pickle`` of timesteps before the oldest of the ``keep``
    newest run checkpoints, so a run keeps the agent files of the run checkpoints it keeps (``keep`` 0: keep all;
    ``best_agent`` files are never removed).

    :return: the removed paths.
    """
    numbered = numbered_checkpoints(directory)
    if keep <= 0 or not numbered:
        return []
    oldest_kept = numbered[-keep:][0][0]
    removed = []
    for entry in os.listdir(directory):
        match = _AGENT_FILE.fullmatch(entry)
        if match and int(match.group(1)) < oldest_kept:
            try:
                os.remove(os.path.join(directory, entry))
                removed.append(os.path.join(directory, entry))
            except OSError:
                pass
    return sorted(removed)


def load_agent_modules(agent: Any, path: str, index: int = 0) -> None:
    """Load the modules (models, optimizers, preprocessors, as ``agent.load`` does from an agent file) of agent
    ``index`` of the run checkpoint ``path`` into ``agent``, for evaluation: a run stopped before its first
    ``checkpoint_interval`` has no agent file, but its run checkpoint holds the agent.

    :raises CheckpointMismatchError: the file is not a run checkpoint, holds another agent, or a module does not fit
        (every module is checked before any is loaded).
    """
    payload = read_checkpoint(path)
    states = payload["agents"]
    if index >= len(states):
        raise CheckpointMismatchError(f"Run checkpoint '{path}' holds {len(states)} agent(s), not an agent {index}")
    state = states[index]
    if state["class"] != type(agent).__name__:
        raise CheckpointMismatchError(
            f"Run checkpoint '{path}' holds a {state['class']} agent, not a {type(agent).__name__}"
        )
    modules = {name: module for name, module in agent.checkpoint_modules.items() if name in state["modules"]}
    checked, problems = {}, []
    for name, module in modules.items():
        try:
            checked[name] = agent._check_state(name, module, state["modules"][name])
        except (RuntimeError, ValueError, KeyError, TypeError, NotImplementedError) as error:
            problems.append(f"module '{name}' ({error})")
    if problems or not modules:
        raise CheckpointMismatchError(
            f"Run checkpoint '{path}' does not fit this {type(agent).__name__}: "
            f"{'; '.join(problems) or 'it has none of its modules'}"
        )
    for name, state_value in checked.items():
        agent._restore_state(name, modules[name], state_value)
