"""The package logger: ``[skrl_like:LEVEL] message`` in ANSI colours."""

import logging

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
        colour = _COLOURS.get(record.levelno, "")
        return f"{colour}[{record.name}:{record.levelname}] {record.getMessage()}{_RESET}"


def _make_logger() -> logging.Logger:
    logger = logging.getLogger("skrl_like")
    logger.setLevel(logging.DEBUG)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
    return logger


logger = _make_logger()
