"""The package logger: ``[skrl_like:LEVEL] message`` on the current ``sys.stderr``, in ANSI colours on a terminal.

The handler looks ``sys.stderr`` up at every record instead of keeping the stream it saw at import: a stream that a
test runner swapped in and closed since (pytest's capture, before the ``atexit`` hooks run) is never written to,
and a stream redirected to a file (``2> run.log``) gets no colour codes.
"""

import logging
import os
import sys
from typing import Any, TextIO

_COLOURS = {
    logging.DEBUG: "\x1b[38;20m",
    logging.INFO: "\x1b[38;20m",
    logging.WARNING: "\x1b[33;20m",
    logging.ERROR: "\x1b[31;20m",
    logging.CRITICAL: "\x1b[31;1m",
}
_RESET = "\x1b[0m"


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"[{record.name}:{record.levelname}] {record.getMessage()}"


def _is_terminal(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):  # https://no-color.org
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _StderrHandler(logging.StreamHandler):
    """A stream handler bound to whatever ``sys.stderr`` is when a record is emitted."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)  # StreamHandler.__init__ would store a stream: this one has none of its own

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:  # setStream: the stream is always the current sys.stderr
        pass

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if _is_terminal(self.stream):
            return f"{_COLOURS.get(record.levelno, '')}{text}{_RESET}"
        return text

    def emit(self, record: logging.LogRecord) -> None:
        stream = self.stream
        if stream is None or getattr(stream, "closed", False):  # interpreter shutdown, or a closed capture
            return
        super().emit(record)


def _make_logger() -> logging.Logger:
    logger = logging.getLogger("skrl_like")
    logger.setLevel(logging.DEBUG)
    if not logger.handlers:
        handler = _StderrHandler()
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
    return logger


logger = _make_logger()
