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


__all__ = [
    "MemoryFileIterator",
    "TensorboardFileIterator",
    "read_tensorboard_scalars",
    "load_run",
    "RunResults",
    "read_results",
    "read_params",
]
