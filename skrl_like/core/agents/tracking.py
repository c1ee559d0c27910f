"""What an agent tracks and where it writes it: tracked values, TensorBoard, ``results.jsonl`` rows and their
listeners, the episode statistics, Weights & Biases.

:class:`AgentTracking` is the first of the agent's bases (``AgentTracking`` <- ``AgentCheckpoints`` <-
``AgentRunState`` <- :class:`~skrl_like.core.agents.base.AgentCore`); ``AgentCore.__init__`` sets its attributes
(:meth:`AgentTracking._setup_tracking`) and ``AgentCore.init`` starts its writer.
"""

import collections
import datetime
import os
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

from skrl_like.core.results import RESULTS_FILE, append_result_row
from skrl_like.core.tensorboard import SummaryWriter
from skrl_like.core.tracking import EpisodeTracker

# with TensorBoard writing off, each tag keeps its most recent values only (between this and twice this many)
TRACKING_HISTORY = 10_000


class RecentValues(list):
    """A tag's tracked values when nothing writes them (``write_interval`` 0): a list that keeps its newest
    :data:`TRACKING_HISTORY` to twice that many values, so a long run without TensorBoard does not grow by a few
    floats per update (inspecting ``agent.tracking_data`` after a short run works as before)."""

    def append(self, value: Any) -> None:
        super().append(value)
        if len(self) > 2 * TRACKING_HISTORY:  # trimmed in blocks: amortised O(1) per value
            del self[:-TRACKING_HISTORY]

    def extend(self, values: Iterable[Any]) -> None:
        super().extend(values)
        if len(self) > 2 * TRACKING_HISTORY:
            del self[:-TRACKING_HISTORY]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number))


class AgentTracking:
    """The agent's tracked values and their writing (see :class:`~skrl_like.core.agents.base.AgentCore`)."""

    def _setup_tracking(self, experiment: Mapping[str, Any]) -> None:
        """The tracking attributes, from ``cfg["experiment"]``: nothing is written before ``init``."""
        self._tracked: Dict[str, list] = collections.defaultdict(list)  # numbers and device scalars not yet read
        self._unread_tags: set = set()  # the tags of _tracked that hold device scalars
        self._unread_reports: List[Tuple[int, Any]] = []  # (timestep, device array) of updates (_keep_report)
        self.write_interval: Union[int, str] = experiment.get("write_interval", "auto")
        self.writer: Optional[SummaryWriter] = None
        self._tracker: Optional[EpisodeTracker] = None
        #: functions called with every ``results.jsonl`` row (a dict) right after it is written
        #: (:meth:`add_result_listener`, :meth:`remove_result_listener`)
        self.result_listeners: List[Callable[[Dict[str, Any]], None]] = []
        #: the trainer's hooks at this agent's updates and results writes (a
        #: :class:`~skrl_like.core.callbacks.AgentHooks`), set through :meth:`set_trainer_hooks` while a trainer trains
        #: with update callbacks or evaluation; ``None`` otherwise, so that nothing is called
        self.trainer_hooks: Optional[Any] = None
        #: environments this agent steps per timestep (set by the trainer; rows report env steps from it)
        self.environments_per_timestep = 1
        self._results_clock: Optional[Tuple[int, float]] = None  # (timestep, time) of the last row or the run start
        directory = experiment.get("directory", "") or os.path.join(os.getcwd(), "runs")
        name = experiment.get("experiment_name", "") or "{}_{}".format(
            datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f"), type(self).__name__
        )
        self.experiment_dir = os.path.join(directory, name)

    def _start_writing(self) -> None:
        """At ``init``, with the intervals resolved: the TensorBoard writer and the episode tracker, or (writing off)
        tracked values that keep only their recent values."""
        if self.write_interval > 0:
            self.writer = SummaryWriter(log_dir=self.experiment_dir)
            self._tracker = self._make_tracker(min(self.write_interval, 4096))
        else:  # never cleared by a write: keep the recent values only
            recent = collections.defaultdict(RecentValues)
            recent.update((tag, RecentValues(values)) for tag, values in self._tracked.items())
            self._tracked = recent

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        raise NotImplementedError

    def _init_wandb(self, trainer_cfg: Mapping[str, Any]) -> None:
        import copy

        import wandb  # optional dependency, imported only when asked for

        kwargs = copy.deepcopy(self.cfg["experiment"].get("wandb_kwargs", {}))
        kwargs.setdefault("name", os.path.basename(self.experiment_dir))
        kwargs.setdefault("sync_tensorboard", True)
        kwargs.setdefault("config", {})
        kwargs["config"].update({**self.cfg, **trainer_cfg})
        wandb.init(**kwargs)

    @property
    def tracking_data(self) -> Dict[str, list]:
        """The values tracked since the last write, by tag: numbers (device scalars and kept update reports are read
        here, all at once)."""
        if self._unread_reports:
            self._read_reports()
        if self._unread_tags:
            self._read_tracked_scalars()
        return self._tracked

    @tracking_data.setter
    def tracking_data(self, values: Dict[str, list]) -> None:
        self._tracked = values
        self._unread_tags = {tag for tag, entries in values.items() if not all(map(_is_number, entries))}

    def track_data(self, tag: str, value: Any) -> None:
        """Record a value for ``tag``; it is reduced (mean, or min/max by suffix) at the next write.

        ``value`` may be a one-element device array (a tensor): it is kept on its device and read with every other
        one at the next write (or the next read of :attr:`tracking_data`), so tracking never waits for the device.
        With writing off (``write_interval`` 0) nothing writes them: device scalars are read at once.
        """
        if not _is_number(value):
            if self.write_interval == 0:
                value = self._read_scalars([value])[0]
            else:
                value = self._kept_scalar(value)
                self._unread_tags.add(tag)
        self._tracked[tag].append(value)

    # -- update reports read with the tracked values -----------------------------------------------------------

    def _keep_report(self, timestep: int, report: Any) -> None:
        """Keep an update's report (its finite flags, and whatever else it returns to the host: a device array) on
        the device until the next write or checkpoint step (or the run's last step) reads it with every other one
        and hands it to :meth:`_handle_report`, so that an update every env step (SAC) never waits for the device.
        With writing off it is read now. A non-finite quantity is then reported up to ``write_interval`` steps late,
        named with the timestep of the update where it appeared."""
        self._unread_reports.append((timestep, report))
        if self.write_interval == 0:
            self._read_reports()

    def _read_reports(self) -> None:
        """Read every kept report (one transfer) and hand them over in order (the first non-finite one raises)."""
        reports, self._unread_reports = self._unread_reports, []
        if reports:
            for (timestep, _), report in zip(reports, self._read_arrays([report for _, report in reports])):
                self._handle_report(timestep, report)

    def _handle_report(self, timestep: int, report: np.ndarray) -> None:
        """The algorithm's reading of the report of its update at ``timestep`` (on the host): raise naming the first
        non-finite quantity, track what it holds."""
        raise NotImplementedError

    # -- backend hooks ----------------------------------------------------------------------------------------

    def _read_arrays(self, arrays: List[Any]) -> List[np.ndarray]:
        """Device arrays as NumPy arrays (a backend reads them in one transfer)."""
        return [np.asarray(array) for array in arrays]

    def _kept_scalar(self, value: Any) -> Any:
        """What :meth:`track_data` keeps of a one-element device array until it is read (a backend may detach it,
        or copy an element out of a larger buffer so that the buffer can be freed)."""
        return value

    def _read_scalars(self, values: List[Any]) -> List[float]:
        """One-element device arrays as floats (a backend reads them in one transfer per device)."""
        return [float(value) for value in values]

    def _read_tracked_scalars(self) -> None:
        places = [
            (entries, index)
            for entries in (self._tracked[tag] for tag in self._unread_tags if tag in self._tracked)
            for index, value in enumerate(entries)
            if not _is_number(value)
        ]
        for (entries, index), number in zip(places, self._read_scalars([entries[index] for entries, index in places])):
            entries[index] = number
        self._unread_tags.clear()

    def write_tracking_data(self, timestep: int, timesteps: int) -> None:
        """Write the reduced tracking data at ``timestep`` to TensorBoard and as one ``results.jsonl`` row, clear it,
        and hand the row to every function in :attr:`result_listeners`. The trainer's :attr:`trainer_hooks` run
        first (evaluation during training: its results go into this row)."""
        if self.trainer_hooks is not None:
            self.trainer_hooks.before_write(self, timestep)
        self._collect_episodes()
        row: Dict[str, Any] = {}
        for tag, values in self.tracking_data.items():
            numbers = [float(v) for v in values]
            if tag.endswith("(min)"):
                value = np.min(numbers)
            elif tag.endswith("(max)"):
                value = np.max(numbers)
            else:
                value = np.mean(numbers)
            row[tag] = float(value)
            if self.writer is not None:
                self.writer.add_scalar(tag, value, timestep)
        if self.writer is not None:
            self.writer.flush()
        self._tracked.clear()
        self._write_result_row(timestep, row)

    # -- what a trainer plugs in (the agent's extension points) ---------------------------------------------------

    def set_trainer_hooks(self, hooks: Optional[Any]) -> Optional[Any]:
        """Run ``hooks`` (a :class:`~skrl_like.core.callbacks.AgentHooks`) around each update and before each results
        row from now on; ``None`` runs nothing. Returns the hooks set before, so a caller can put them back."""
        previous, self.trainer_hooks = self.trainer_hooks, hooks
        return previous

    def add_result_listener(self, listener: Callable[[Dict[str, Any]], None]) -> None:
        """Call ``listener(row)`` with every ``results.jsonl`` row (a dict) right after it is written."""
        self.result_listeners.append(listener)

    def remove_result_listener(self, listener: Callable[[Dict[str, Any]], None]) -> None:
        """Stop calling ``listener`` (added by :meth:`add_result_listener`); a listener not added is ignored."""
        if listener in self.result_listeners:
            self.result_listeners.remove(listener)

    def mark_run_start(self, timestep: int) -> None:
        """Start the clock of the ``env_steps_per_second`` column at ``timestep`` (the trainer calls it when a loop
        starts, so that a row's rate covers stepping only, not the set-up)."""
        self._results_clock = (int(timestep), time.perf_counter())

    def _write_result_row(self, timestep: int, values: Dict[str, float]) -> None:
        """One ``results.jsonl`` row: the step counters, the wall time, the env-steps rate since the previous row (or
        the run's start), then the reduced tracked values; appended while TensorBoard writing is on."""
        now = time.perf_counter()
        start_timestep, start_time = self._results_clock or (timestep, now)
        elapsed = now - start_time
        rate = (timestep - start_timestep) * self.environments_per_timestep / elapsed if elapsed > 0 else None
        self._results_clock = (timestep, now)
        row = {
            "timestep": int(timestep),
            "env_steps": int(timestep) * self.environments_per_timestep,
            "wall_time": time.time(),
            "env_steps_per_second": rate,
            **values,
        }
        if self.writer is not None:
            append_result_row(os.path.join(self.experiment_dir, RESULTS_FILE), row)
        for listener in self.result_listeners:
            listener(row)

    def _collect_episodes(self) -> None:
        if self._tracker is not None:
            for tag, values in self._tracker.collect().items():
                self._tracked[tag].extend(values)
