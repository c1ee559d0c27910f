"""A minimal TensorBoard scalar writer that needs only the ``tensorboard`` package (no torch, no TensorFlow)."""

import os
import time

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter


class SummaryWriter:
    """Write scalars as TensorBoard event files under ``log_dir`` (the API subset agents use).

    :param log_dir: folder for the ``events.out.tfevents.*`` file (created if missing).
    :param flush_secs: how often pending events are flushed to disk.
    """

    def __init__(self, log_dir: str, flush_secs: int = 10) -> None:
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self._writer = EventFileWriter(log_dir, flush_secs=flush_secs)

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> None:
        summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(scalar_value))])
        self._writer.add_event(Event(wall_time=time.time(), step=int(global_step), summary=summary))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
