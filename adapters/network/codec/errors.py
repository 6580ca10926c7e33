"""The codec's exceptions: nothing else ever escapes a decode (no IndexError/struct.error)."""

from __future__ import annotations


class CodecError(Exception):
    """Base class of every error the codec raises on purpose."""


class DecodeError(CodecError):
    """Bytes that do not decode under the schema: truncated, trailing bytes, bad lengths,
    invalid UTF-8. A broker answers it by closing that one connection."""


class EncodeError(CodecError, ValueError):
    """A value that cannot be written under the schema (missing field, out of range...)."""


class FrameError(CodecError):
    """A size prefix that cannot start a frame (negative). The connection must close."""


class FrameTooLarge(FrameError):
    """A size prefix over the configured maximum; raised before the body is buffered."""
