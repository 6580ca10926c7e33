"""The state-change log's file: bounded by size-based rotation.

A node writes one state-change line per move (a controller that moves 10,000 leaderships
writes 10,000), and nothing used to bound the file: one benchmark left 678 MB in
``.kcontrol/logs/node-<id>/``. ``StateChangeFile`` rotates it as log4j's
``RollingFileAppender`` does (``MaxFileSize``, ``MaxBackupIndex``): when a line would take
the file past ``max_bytes`` it becomes ``state-change.log.1`` (``.1`` becomes ``.2``, and so
on), the oldest beyond ``files`` in all is deleted, and a new file is begun. So the log takes
at most ``files * max_bytes`` bytes (a single line longer than ``max_bytes`` gets a file of its
own) and always keeps the newest lines. Defaults: 50 MiB x 3 files.

Sizes are bytes, or a number with a binary suffix as log4j writes them: ``512KB``, ``50MB``,
``1GB`` (also ``K``, ``M``, ``G``, ``KiB``, ``MiB``, ``GiB``; case does not matter).

``log_lines`` logs many lines at once (a broker's replica writer: one line per replica file,
thousands after one metadata batch): where every handler the logger reaches is a
``StateChangeFile``, as in the default setup, they go as one record, which the handler
writes one formatted line each (the record's time, level and logger on every line, as one
record per line would give them), in one write and one size check per file, rotating
between lines as above. Anywhere else (a ``--log-config`` handler, a test's capture) each
line is a record of its own, as before. One record per line cost the writer ~30 us a line
(a record built, the caller found, the line formatted twice -- once to check the size --,
two ``stat`` calls and a flush); see ``docs/benchmarks.md`` (issue 26)."""

from __future__ import annotations

import logging.handlers
import os
import re
from collections.abc import Sequence
from pathlib import Path

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_FILES = 3
MIN_MAX_BYTES = 1024
MAX_MAX_BYTES = 1024 ** 4
MIN_FILES = 2
MAX_FILES = 100
_UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
_SIZE = re.compile(r"\s*(\d+)\s*([kmg]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``text`` as a number of bytes; ``ValueError`` saying what is wrong with it."""
    m = _SIZE.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with KB, MB or GB "
                         f"(e.g. 50MB)")
    size = int(m.group(1)) * _UNITS[m.group(2).lower()]
    check_max_bytes(size)
    return size


def check_max_bytes(size: int) -> None:
    if not MIN_MAX_BYTES <= size <= MAX_MAX_BYTES:
        raise ValueError(f"{size} bytes: from {MIN_MAX_BYTES} (1KB) to {MAX_MAX_BYTES} (1TB)")


def check_files(files: int) -> None:
    if not MIN_FILES <= files <= MAX_FILES:
        raise ValueError(f"{files} files: from {MIN_FILES} (the file being written and one "
                         f"rotated) to {MAX_FILES}")


class StateChangeFile(logging.handlers.RotatingFileHandler):
    """A rotating file handler that creates its directory, and the file, when it first
    writes."""

    def __init__(self, path: Path, max_bytes: int = DEFAULT_MAX_BYTES,
                 files: int = DEFAULT_FILES) -> None:
        check_max_bytes(max_bytes)
        check_files(files)
        super().__init__(path, maxBytes=max_bytes, backupCount=files - 1, encoding="utf-8",
                         delay=True)

    def _open(self):  # type: ignore[no-untyped-def]
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def emit(self, record: logging.LogRecord) -> None:
        lines = record.__dict__.get(LINES)
        if lines is None:
            super().emit(record)
            return
        try:
            self._emit_lines(record, lines)
        except Exception:  # noqa: BLE001 -- as logging's own handlers: reported, not raised
            self.handleError(record)

    def _emit_lines(self, record: logging.LogRecord, lines: Sequence[str]) -> None:
        """Each of ``lines`` as its own formatted line; the file rotated before a line would
        take it to ``max_bytes``, as ``shouldRollover`` decides for a record (but never an
        empty file: a line longer than ``max_bytes`` gets a file of its own)."""
        texts = self._format_lines(record, lines)
        name = self.baseFilename
        regular = not (os.path.exists(name) and not os.path.isfile(name))  # bpo-45401
        if self.stream is None:
            self.stream = self._open()
        self.stream.seek(0, 2)
        pos = self.stream.tell()
        chunk: list[str] = []
        for text in texts:
            if regular and pos > 0 and pos + len(text) >= self.maxBytes:
                if chunk:
                    self.stream.write("".join(chunk))
                    chunk = []
                self.doRollover()
                if self.stream is None:  # delay: not reopened by the rollover
                    self.stream = self._open()
                pos = 0
            chunk.append(text)
            pos += len(text)
        if chunk:
            self.stream.write("".join(chunk))
        self.flush()

    def _format_lines(self, record: logging.LogRecord, lines: Sequence[str]) -> list[str]:
        end = self.terminator
        one = logging.makeLogRecord(record.__dict__)
        one.__dict__.pop(LINES, None)
        one.msg = "%s"
        if _plain(self.formatter or _DEFAULT) and not (
                one.exc_info or one.exc_text or one.stack_info):
            one.args = (_MARK,)
            head, mark, tail = self.format(one).partition(_MARK)
            if mark and _MARK not in tail:  # the message verbatim, once: one format for all
                tail += end
                return [f"{head}{line}{tail}" for line in lines]
        out = []
        for line in lines:  # any other formatter: each line formatted as its own record
            one.args = (line,)
            out.append(self.format(one) + end)
        return out


LINES = "kcontrol_lines"
"""The attribute of a ``log_lines`` record holding its lines."""
_MARK = "\x00kcontrol-line\x00"
_DEFAULT = logging.Formatter()  # what a handler without a formatter formats with


def _plain(formatter: logging.Formatter) -> bool:
    """A formatter that puts the message in verbatim, once (``%(message)s``, no width)."""
    fmt = getattr(formatter, "_fmt", None) or ""
    return (type(formatter) is logging.Formatter
            and isinstance(formatter._style, logging.PercentStyle)
            and fmt.count("%(message)") == 1 and "%(message)s" in fmt)


def log_lines(logger: logging.Logger, level: int, lines: Sequence[str]) -> None:
    """``lines`` logged as ``logger.log(level, "%s", line)`` for each would log them: in one
    record when there are several and every handler the logger reaches is a
    ``StateChangeFile`` (the record's message is the lines joined, should a filter look),
    else one record per line."""
    if not lines or not logger.isEnabledFor(level):
        return
    if len(lines) == 1 or not _batched(logger):
        for line in lines:
            logger.log(level, "%s", line, stacklevel=2)
        return
    fn, lno, func, _ = logger.findCaller(False, 2)
    record = logger.makeRecord(logger.name, level, fn, lno, "%s", ("\n".join(lines),), None,
                               func)
    record.__dict__[LINES] = tuple(lines)
    logger.handle(record)


def _batched(logger: logging.Logger) -> bool:
    """Whether every handler ``logger``'s records reach is a ``StateChangeFile`` (and one is)."""
    found = False
    node: logging.Logger | None = logger
    while node is not None:
        for handler in node.handlers:
            if not isinstance(handler, StateChangeFile):
                return False
            found = True
        if not node.propagate:
            break
        node = node.parent
    return found
