"""Read runs back: a run directory's ``results.jsonl`` and ``params.json`` (``load_run``, from
:mod:`skrl_like.core.results`), and skrl's memory-file and TensorBoard-file iterators (``MemoryFileIterator``,
``TensorboardFileIterator``).

TensorBoard event files are read with the ``tensorboard`` package that skrl_like already needs to write them
(skrl 1.4 reads them with TensorFlow's ``summary_iterator``, an optional dependency of several hundred MB); torch is
imported only to read ``.pt`` memory files.
"""

import csv
import glob
import os
from typing import Any, Dict, List, Sequence, Tuple, Union

import numpy as np

from skrl_like import logger
from skrl_like.core.results import RunResults, load_run, read_params, read_results


class MemoryFileIterator:
    """Iterate over memory files exported by ``Memory.save`` (``.pt``, ``.npz``, ``.csv``), in name order.

    Each item is ``(file name, data)``: ``.pt`` -> ``torch.load(file)`` (``{name: (memory_size, num_envs, size)
    tensor}``), ``.npz`` -> ``numpy.load(file)``, ``.csv`` -> ``{name: [row, ...]}`` with one row (a list of ``size``
    values) per stored sample.

    :param pathname: a ``glob`` pattern, e.g. ``"runs/*/memories/*.csv"``.
    :raises ValueError: (from ``next``) a file with another extension.
    """

    def __init__(self, pathname: str) -> None:
        self.file_paths = sorted(glob.glob(pathname))
        self.n = 0

    def __iter__(self) -> "MemoryFileIterator":
        return self

    def __next__(self) -> Tuple[str, Any]:
        if self.n >= len(self.file_paths):
            raise StopIteration
        path = self.file_paths[self.n]
        self.n += 1
        name = os.path.basename(path)
        extension = os.path.splitext(path)[1]
        if extension == ".pt":
            import torch  # only for torch memory files

            return name, torch.load(path, weights_only=False)
        if extension == ".npz":
            return name, np.load(path)
        if extension == ".csv":
            return name, _read_memory_csv(path)
        raise ValueError(f"Unsupported memory file '{path}': give .pt, .npz or .csv files")


def _read_memory_csv(path: str) -> Dict[str, List[list]]:
    """``{name: rows}`` of a memory CSV whose header columns are ``<name>.<index>`` (``{}`` if the header is not)."""
    with open(path, newline="") as file:
        reader = csv.reader(file)
        header = next(reader, [])
        names: Dict[str, int] = {}
        for column in header:
            name, dot, index = column.rpartition(".")
            if not dot or not index.isdigit():
                logger.warning(f"Memory file '{path}': header column {column!r} is not <name>.<index>")
                return {}
            names[name] = names.get(name, 0) + 1
        data: Dict[str, List[list]] = {name: [] for name in sorted(names)}
        for row in reader:
            start = 0
            for name in names:  # header order
                cells = row[start : start + names[name]]
                start += names[name]
                # skrl's quirk, kept: bool("False") is True
                data[name].append([bool(cell) if cell in ("True", "False") else float(cell) for cell in cells])
        return data


def read_tensorboard_scalars(path: str) -> Dict[str, List[List[float]]]:
    """``{tag: [[step, value], ...]}`` of every scalar in one TensorBoard event file (the first value of each
    event's summary, as skrl reads them), in file order."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    scalars: Dict[str, List[List[float]]] = {}
    for event in EventFileLoader(path).Load():
        if not event.HasField("summary") or not event.summary.value:
            continue
        value = event.summary.value[0]
        if value.HasField("simple_value"):
            number = float(value.simple_value)
        elif value.HasField("tensor"):  # the loader turns simple values into scalar tensors
            number = float(tensor_util.make_ndarray(value.tensor))
        else:
            continue
        scalars.setdefault(value.tag, []).append([int(event.step), number])
    return scalars


class TensorboardFileIterator:
    """Iterate over TensorBoard event files, in name order; each item is ``(name of the file's directory, {tag:
    [[step, value], ...]})`` for the requested tags.

    :param pathname: a ``glob`` pattern, e.g. ``"runs/*/events.out.tfevents.*"``.
    :param tags: one tag or a list of them, e.g. ``"Reward / Total reward (mean)"``.
    """

    def __init__(self, pathname: str, tags: Union[str, Sequence[str]]) -> None:
        self.file_paths = sorted(glob.glob(pathname))
        self.tags = [tags] if isinstance(tags, str) else list(tags)
        self.n = 0

    def __iter__(self) -> "TensorboardFileIterator":
        return self

    def __next__(self) -> Tuple[str, Dict[str, List[List[float]]]]:
        if self.n >= len(self.file_paths):
            raise StopIteration
        path = self.file_paths[self.n]
        self.n += 1
        name = os.path.basename(os.path.dirname(path))
        try:
            scalars = read_tensorboard_scalars(path)
        except Exception as error:  # a torn or foreign file: skrl logs and goes on
            logger.warning(f"Cannot read TensorBoard file '{path}': {error}")
            scalars = {}
        return name, {tag: scalars[tag] for tag in self.tags if tag in scalars}


def _run_description(run_dir: str) -> Dict[str, Any]:
    """What a run was: ``{"backend", "agent", "env", "seed"}`` from its ``params.json`` and the ``config.yaml`` that
    ``skrl_like train`` writes (a key is left out where neither file says)."""
    description: Dict[str, Any] = {}
    try:
        params = read_params(run_dir)
    except (FileNotFoundError, ValueError):
        params = {}
    description["backend"] = (params.get("trainer") or {}).get("backend")
    description["agent"] = next((agent.get("class") for agent in params.get("agents") or []), None)
    description["env"] = (params.get("env") or {}).get("id")
    config_path = os.path.join(run_dir, "config.yaml")
    if os.path.isfile(config_path):
        import yaml

        try:
            with open(config_path, encoding="utf-8") as file:
                config = yaml.safe_load(file) or {}
        except (OSError, yaml.YAMLError):
            config = {}
        if isinstance(config, dict):
            description["seed"] = config.get("seed")
            description["agent"] = description["agent"] or (config.get("agent") or {}).get("class")
            description["env"] = description["env"] or (config.get("env") or {}).get("id")
    return {key: value for key, value in description.items() if value is not None}


def _path_suffixes(paths: Sequence[str]) -> List[str]:
    """The shortest trailing part of each path that tells it apart from the others (the whole path at worst)."""
    parts = [os.path.normpath(os.path.abspath(path)).split(os.sep) for path in paths]
    for depth in range(1, max(len(part) for part in parts) + 1):
        suffixes = [os.path.join(*part[-depth:]) for part in parts]
        if len(set(suffixes)) == len(suffixes):
            return suffixes
    return [os.path.normpath(os.path.abspath(path)) for path in paths]


def run_labels(run_dirs: Sequence[str]) -> List[str]:
    """A legend label for each run directory, saying what differs between them: the backend, the agent, the env
    and the seed where they differ (``"jax, seed 7"``), else the shortest distinguishing part of the folder path
    (``skrl_like train`` names every run ``<date>_<agent>``, so folder names alone often read the same).

    :param run_dirs: the runs, in plot order; a single run is labelled by its folder name.
    """
    folders = _path_suffixes(run_dirs)
    if len(run_dirs) < 2:
        return folders
    descriptions = [_run_description(run_dir) for run_dir in run_dirs]
    differing = [
        key
        for key in ("backend", "agent", "env", "seed")
        if len({str(description[key]) for description in descriptions if key in description}) > 1
    ]
    labels = []
    for description, folder in zip(descriptions, folders):
        parts = [
            f"seed {description.get('seed', '?')}" if key == "seed" else str(description.get(key, "?"))
            for key in differing
        ]
        labels.append(", ".join(parts) if any(key in description for key in differing) else folder)
    if len(set(labels)) < len(labels):  # runs that differ in nothing recorded: their folders tell them apart
        labels = [folder if label == folder else f"{label} ({folder})" for label, folder in zip(labels, folders)]
    return labels


def smooth(values: Sequence[float], window: int) -> np.ndarray:
    """The trailing moving average of ``values`` over ``window`` points (fewer at the start); ``window`` 1 returns
    them as they are.

    :raises ValueError: ``window`` is not an int >= 1.
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"The smoothing window must be an int >= 1 (1: no smoothing), got {window!r}")
    array = np.asarray(values, dtype=np.float64)
    if window == 1 or array.size == 0:
        return array
    sums = np.cumsum(np.concatenate([[0.0], array]))
    ends = np.arange(1, array.size + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


__all__ = [
    "run_labels",
    "smooth",
    "MemoryFileIterator",
    "TensorboardFileIterator",
    "read_tensorboard_scalars",
    "load_run",
    "RunResults",
    "read_results",
    "read_params",
]
