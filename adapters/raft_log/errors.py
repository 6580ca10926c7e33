"""The errors of the metadata log on disk."""

from __future__ import annotations


class CorruptLogError(Exception):
    """The log holds bytes it cannot serve: a bad CRC or a malformed batch anywhere but the
    torn tail of the last segment (which recovery truncates), or a gap between segments.
    The node stops rather than serve them; the message names the file, the byte position
    and the offset."""

    def __init__(self, path: str, position: int, offset: int, reason: str) -> None:
        super().__init__(f"{path}: corrupt at byte {position} (offset {offset}): {reason}")
        self.path, self.position, self.offset, self.reason = path, position, offset, reason


class MalformedBatch(ValueError):
    """Bytes that are not a record batch v2 we can read (before a file and position are
    known: the log turns it into :class:`CorruptLogError`). ``position`` is relative to the
    batch's first byte."""

    def __init__(self, reason: str, position: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.position = reason, position


class BatchTooLarge(ValueError):
    """A batch whose encoding is over the log's ``max_batch_bytes``: refused, not written."""


class OffsetOutOfRange(ValueError):
    """A read or truncation outside [log start, log end]."""
