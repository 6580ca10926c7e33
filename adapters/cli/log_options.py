"""Logging of the long-running commands (``kcontrol controller``, ``kcontrol broker``, and the
brokers ``kcontrol cluster up``/``demo`` and ``kcontrol chaos`` start): the ``--log-dir`` and
``--log-config`` options and the setup they choose.

Default setup, as Kafka's log4j configuration: the server log on stderr, and the state-change
loggers (``kcontrol.state.change``: the controller's; ``kcontrol.broker.state.change``: the
broker's) in ``state-change.log`` in the log directory, not in the server log. The directory
and the file are created when the first state change is logged. The file rotates by size
(``adapters.state_change_file``): ``--state-change-log-max-bytes SIZE`` (default 50MB) and
``--state-change-log-files N`` in all (default 3) bound it; a bad value is a usage error.

``--log-config FILE``: a JSON file holding a ``logging.config.dictConfig`` dictionary, which
replaces the default setup (``--log-level`` and ``--log-dir`` then do nothing);
``disable_existing_loggers`` defaults to false. A file that
cannot be read, is not a JSON object or is refused by ``dictConfig`` is a usage error (exit
code 2) whose message names the file and the problem.
"""

from __future__ import annotations

import json
import logging
import logging.config
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from adapters.state_change_file import (
    DEFAULT_FILES,
    DEFAULT_MAX_BYTES,
    StateChangeFile,
    check_files,
    parse_size,
)

STATE_CHANGE_LOGGERS = ("kcontrol.state.change", "kcontrol.broker.state.change")
STATE_CHANGE_FILE = "state-change.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DEFAULT_LOG_ROOT = Path(".kcontrol/logs")

F = TypeVar("F", bound=Callable[..., Any])


class LogConfigError(Exception):
    """A ``--log-config`` file that cannot be used; the message names the file."""


def read_log_config(path: Path) -> dict[str, Any]:
    """The dictConfig dictionary in the JSON file ``path`` (not applied yet)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise LogConfigError(f"{path}: cannot be read ({exc})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise LogConfigError(f"{path}: holds a JSON {type(config).__name__}, not an object "
                             f"(a logging.config.dictConfig dictionary)")
    return config


def apply_log_config(path: Path, config: dict[str, Any]) -> None:
    """``logging.config.dictConfig(config)``; what it refuses raises ``LogConfigError``.
    ``disable_existing_loggers`` defaults to false: kcontrol's loggers exist before the file is
    read, and dictConfig's default would silence them all."""
    try:
        logging.config.dictConfig({"disable_existing_loggers": False, **config})
    except (ValueError, TypeError, AttributeError, ImportError, KeyError, OSError) as exc:
        cause = f"{exc}" + (f": {exc.__cause__}" if exc.__cause__ is not None else "")
        raise LogConfigError(f"{path}: logging.config.dictConfig refused it ({cause})") from None


def _log_config_callback(_ctx: click.Context, param: click.Parameter,
                         value: Path | None) -> tuple[Path, dict[str, Any]] | None:
    if value is None:
        return None
    try:
        return value, read_log_config(value)
    except LogConfigError as exc:
        raise click.BadParameter(str(exc), param=param) from None


LOG_CONFIG_HELP = ("Configure logging from this JSON file (a logging.config.dictConfig "
                   "dictionary) instead of the default setup; --log-level, --log-dir and the "
                   "--state-change-log-* options are then ignored.")


def log_config_option(help_text: str = LOG_CONFIG_HELP) -> Callable[[F], F]:
    """The ``--log-config FILE`` option, read and checked when parsed; the command receives
    ``(path, dictionary)`` or None."""
    return click.option(
        "--log-config", "log_config", type=click.Path(dir_okay=False, path_type=Path),
        default=None, metavar="FILE", callback=_log_config_callback, help=help_text)


def log_dir_option(default_name: str) -> Callable[[F], F]:
    """The ``--log-dir DIR`` option (None when not given: the command then uses
    ``.kcontrol/logs/<its own name>``); ``default_name`` is how the help names that default."""
    return click.option(
        "--log-dir", "log_dir", type=click.Path(file_okay=False, path_type=Path),
        default=None, metavar="DIR",
        help=f"Write the state-change log to DIR/{STATE_CHANGE_FILE} (default: "
             f"{DEFAULT_LOG_ROOT}/{default_name}).")


def _size_callback(_ctx: click.Context, param: click.Parameter, value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param=param) from None


def _files_callback(_ctx: click.Context, param: click.Parameter, value: int) -> int:
    try:
        check_files(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param=param) from None
    return value


def state_change_log_options(f: F) -> F:
    """``--state-change-log-max-bytes SIZE`` and ``--state-change-log-files N``: the bound
    of the default setup's state-change log (the command receives ``state_change_max_bytes``
    and ``state_change_files``)."""
    f = click.option(
        "--state-change-log-files", "state_change_files", type=int, default=DEFAULT_FILES,
        show_default=True, metavar="N", callback=_files_callback,
        help=f"Keep at most N state-change log files: {STATE_CHANGE_FILE} and N-1 rotated "
             f"ones (.1 the newest).")(f)
    return click.option(
        "--state-change-log-max-bytes", "state_change_max_bytes", default="50MB",
        show_default=True, metavar="SIZE", callback=_size_callback,
        help=f"Rotate {STATE_CHANGE_FILE} before it would pass SIZE (bytes, or KB, MB, GB).")(f)


class LoggingSetup:
    """What ``configure_logging`` installed; ``close`` removes the state-change file handlers
    again (the command may run inside a test process)."""

    def __init__(self, handlers: list[tuple[logging.Logger, logging.Handler, bool, int]]) -> None:
        self._handlers = handlers

    def close(self) -> None:
        for logger, handler, propagate, level in self._handlers:
            logger.removeHandler(handler)
            logger.propagate = propagate
            logger.setLevel(level)
            handler.close()
        self._handlers = []


def configure_logging(level: str, log_dir: Path,
                      log_config: tuple[Path, dict[str, Any]] | None, *,
                      max_bytes: int = DEFAULT_MAX_BYTES,
                      files: int = DEFAULT_FILES) -> LoggingSetup:
    """Set up logging for a long-running command: ``log_config`` if given (raising
    ``click.BadParameter`` if dictConfig refuses it), else the default setup (the server log on
    stderr at ``level``, the state-change loggers to ``log_dir/state-change.log`` only,
    rotated before it passes ``max_bytes``, ``files`` files kept in all)."""
    if log_config is not None:
        path, config = log_config
        try:
            apply_log_config(path, config)
        except LogConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="'--log-config'") from None
        return LoggingSetup([])
    numeric = getattr(logging, level)
    logging.basicConfig(level=numeric, stream=sys.stderr, format=LOG_FORMAT)
    logging.getLogger("kazoo").setLevel(max(logging.WARNING, numeric))
    handler = StateChangeFile(log_dir / STATE_CHANGE_FILE, max_bytes, files)  # both loggers
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    installed = []
    for name in STATE_CHANGE_LOGGERS:
        logger = logging.getLogger(name)
        installed.append((logger, handler, logger.propagate, logger.level))
        logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(numeric)
    return LoggingSetup(installed)
