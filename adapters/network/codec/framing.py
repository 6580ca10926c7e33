"""Size-prefixed frames (``Size int32`` big-endian, then that many bytes), sans-I/O.

:class:`FrameReader` takes bytes as they arrive and hands back whole frames. A size over
the configured maximum raises :class:`FrameTooLarge` as soon as the 4-byte prefix is seen,
before any of the body is buffered; a negative size raises :class:`FrameError`. After an
error the reader stays broken (every later ``feed`` raises it again): close the connection.
"""

from __future__ import annotations

import struct

from adapters.network.codec.errors import EncodeError, FrameError, FrameTooLarge

SIZE = struct.Struct(">i")
DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes default


def frame(payload: bytes | bytearray) -> bytes:
    """``payload`` (header + body) with its size prefix."""
    if len(payload) > 0x7FFFFFFF:
        raise EncodeError(f"frame of {len(payload)} bytes does not fit an int32 size")
    return SIZE.pack(len(payload)) + bytes(payload)


class FrameReader:
    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_frame_size < 0:
            raise ValueError("max_frame_size must be >= 0")
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._expected: int | None = None  # size of the frame being read, once known
        self._error: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held, waiting for the rest of a frame."""
        return len(self._buffer)

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Adds ``data``; returns the frames (without size prefix) it completed, in order."""
        if self._error is not None:
            raise self._error
        self._buffer += data
        frames: list[bytes] = []
        pos = 0
        while True:
            if self._expected is None:
                if len(self._buffer) - pos < SIZE.size:
                    break
                self._expected = self._check(SIZE.unpack_from(self._buffer, pos)[0])
                pos += SIZE.size
            if len(self._buffer) - pos < self._expected:
                break
            frames.append(bytes(self._buffer[pos : pos + self._expected]))
            pos += self._expected
            self._expected = None
        del self._buffer[:pos]
        return frames

    def _check(self, size: int) -> int:
        if size < 0:
            self._error = FrameError(f"negative frame size {size}")
        elif size > self.max_frame_size:
            self._error = FrameTooLarge(
                f"frame of {size} bytes is over the maximum of {self.max_frame_size}"
            )
        if self._error is not None:
            self._buffer.clear()
            raise self._error
        return size
