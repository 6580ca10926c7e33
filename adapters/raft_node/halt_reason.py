"""``halt_reason``: the one line a node halts with. A failed write of the metadata log, its
quorum-state file or a snapshot (``OSError``: ``ENOSPC``, ``EROFS``, ``EIO``...) names the
log's directory and the errno by name -- ``os.pwrite`` and ``os.fsync`` name no file, so
without it a full disk reads as a bare "No space left on device" -- as Kafka names the
directory when it halts on a metadata log I/O error. Anything else: its type and message."""

from __future__ import annotations

import errno
import os


def halt_reason(exc: BaseException, directory: str | os.PathLike[str] | None) -> str:
    """``metadata log I/O error in DIR: errno 28 ENOSPC (No space left on device)[ on
    FILE]`` for an ``OSError`` with an errno; ``Type: message`` otherwise."""
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, "?")
        where = f" in {os.fspath(directory)}" if directory is not None else ""
        text = exc.strerror or os.strerror(exc.errno)
        on = f" on {exc.filename}" if exc.filename else ""
        return f"metadata log I/O error{where}: errno {exc.errno} {name} ({text}){on}"
    return f"{type(exc).__name__}: {exc}"
