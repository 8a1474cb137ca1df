"""``pypto.runtime.log_config.configure_log`` (spec pypto-jit §10.4): the ``pypto`` logger's level.

pypto-lib's harness calls it when a ``log_level`` is given; upstream names levels as strings
(``"debug"``, ``"info"``, ...) or numbers, and so does this: it sets the level of Python's ``pypto``
logger, which the compiler and runtime log through.
"""

from __future__ import annotations

import logging

_NAMES = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "warning": logging.WARNING,
          "error": logging.ERROR, "fatal": logging.CRITICAL, "critical": logging.CRITICAL, "null": logging.CRITICAL + 10}


def configure_log(level: str | int) -> logging.Logger:
    """Set the ``pypto`` logger to ``level`` (a name above or a ``logging`` number) and return it."""
    if isinstance(level, str):
        if level.lower() not in _NAMES:
            raise ValueError(f"configure_log: unknown level {level!r} (use one of {', '.join(_NAMES)})")
        level = _NAMES[level.lower()]
    logger = logging.getLogger("pypto")
    logger.setLevel(level)
    return logger
