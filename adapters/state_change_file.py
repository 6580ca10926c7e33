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
``1GB`` (also ``K``, ``M``, ``G``, ``KiB``, ``MiB``, ``GiB``; case does not matter)."""

from __future__ import annotations

import logging.handlers
import re
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
