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


class AgentTracking:
    """The agent's tracked values and their writing (see :class:`~skrl_like.core.agents.base.AgentCore`)."""

    def _setup_tracking(self, experiment: Mapping[str, Any]) -> None:
        """The tracking attributes, from ``cfg["experiment"]``: nothing is written before ``init``."""
        self.tracking_data: Dict[str, list] = collections.defaultdict(list)
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
            recent.update((tag, RecentValues(values)) for tag, values in self.tracking_data.items())
            self.tracking_data = recent

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

    def track_data(self, tag: str, value: Any) -> None:
        """Record a value for ``tag``; it is reduced (mean, or min/max by suffix) at the next write.

        ``value`` may be a device scalar: it is converted only when written, so tracking never syncs.
        """
        self.tracking_data[tag].append(value)

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
        self.tracking_data.clear()
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
                self.tracking_data[tag].extend(values)
