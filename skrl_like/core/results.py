"""The run directory's plain-text files, written and read back without TensorBoard.

A run directory is an agent's ``experiment_dir`` (beside the TensorBoard events). It holds:

* ``params.json``: the resolved configuration of the trainer, the agents and the environment, written when a run
  starts (classes and functions as their qualified names, so that it is readable JSON);
* ``results.jsonl``: one JSON object per line, one line per write interval: ``timestep``, ``env_steps``,
  ``wall_time`` (seconds since the epoch), ``env_steps_per_second`` (since the previous line, ``null`` for none),
  then every tracked tag's reduced value (e.g. ``"Reward / Total reward (mean)"``, ``"Loss / Policy loss"``);
  a value that is not finite is written as ``null``.

:func:`load_run` reads both back (``skrl_like.utils.postprocessing`` re-exports it).
"""

import dataclasses
import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from skrl_like.core.io import atomic_write

RESULTS_FILE = "results.jsonl"
PARAMS_FILE = "params.json"


def _json_value(value: Any) -> Any:
    """A JSON-able form of a configuration value: numbers, strings and containers as they are, the rest by name."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float, np.generic)):
        number = value.item() if isinstance(value, np.generic) else value
        if isinstance(number, float) and not math.isfinite(number):
            return None
        return number
    if isinstance(value, np.ndarray):
        return _json_value(value.tolist())
    if isinstance(value, Mapping):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    if isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", None)
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
        return f"{module}.{name}" if module else name
    return repr(value)


def append_result_row(path: str, row: Mapping[str, Any]) -> None:
    """Append one row to ``results.jsonl`` (non-finite numbers become ``null``)."""
    line = json.dumps({key: _json_value(value) for key, value in row.items()}, allow_nan=False)
    with open(path, "a", encoding="utf-8") as file:
        file.write(line + "\n")


def truncate_results(path: str, timestep: int) -> None:
    """Drop the rows after ``timestep`` (a resume from that timestep writes them again), atomically."""
    if not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as file:
        lines = file.readlines()
    kept = []
    for line in lines:
        try:
            if json.loads(line).get("timestep", 0) > timestep:
                continue
        except ValueError:
            continue  # a line torn by a killed process
        kept.append(line)
    if len(kept) != len(lines):
        atomic_write(path, lambda file: file.write("".join(kept).encode("utf-8")))


def write_params(run_dir: str, params: Mapping[str, Any]) -> str:
    """Write ``params.json`` into ``run_dir`` (atomically) and return its path."""
    path = os.path.join(run_dir, PARAMS_FILE)
    text = json.dumps(_json_value(params), indent=2, allow_nan=False)
    atomic_write(path, lambda file: file.write(text.encode("utf-8")))
    return path


def read_params(run_dir: str) -> Dict[str, Any]:
    """The run's ``params.json``.

    :raises FileNotFoundError: the run directory has none.
    """
    path = os.path.join(run_dir, PARAMS_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"'{run_dir}' has no {PARAMS_FILE}: it is not a skrl_like run directory")
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def read_results(run_dir: str) -> List[Dict[str, Any]]:
    """The run's ``results.jsonl`` rows, in order; a line torn by a killed process (the last one) is skipped.

    :raises FileNotFoundError: the run directory has no results file.
    """
    path = os.path.join(run_dir, RESULTS_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"'{run_dir}' has no {RESULTS_FILE}: rows are written at every write interval while "
            "cfg['experiment']['write_interval'] > 0"
        )
    rows = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


@dataclasses.dataclass
class RunResults:
    """A run directory read back: its path, ``params.json`` (``{}`` where absent) and ``results.jsonl`` rows."""

    path: str
    params: Dict[str, Any]
    rows: List[Dict[str, Any]]

    @property
    def tags(self) -> List[str]:
        """Every column found in the rows, in first-seen order."""
        seen: Dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def series(self, tag: str, x: str = "timestep") -> Tuple[List[float], List[Optional[float]]]:
        """``(xs, values)`` of ``tag`` over the rows that have it, against the column ``x`` (``"timestep"``,
        ``"env_steps"`` or ``"wall_time"``).

        :raises KeyError: no row has ``tag`` (the message lists the tags there are).
        """
        pairs = [(row.get(x), row[tag]) for row in self.rows if tag in row]
        if not pairs:
            raise KeyError(f"No row of '{self.path}' has the tag {tag!r}; its tags are {self.tags}")
        return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


def load_run(run_dir: str) -> RunResults:
    """Read a run directory's ``params.json`` and ``results.jsonl``.

    :raises FileNotFoundError: neither file is there.
    """
    rows = read_results(run_dir)
    try:
        params = read_params(run_dir)
    except FileNotFoundError:
        params = {}
    return RunResults(path=run_dir, params=params, rows=rows)
