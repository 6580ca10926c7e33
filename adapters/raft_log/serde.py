"""How the log turns the state machine's records into a record's value bytes and back: a
serde is passed to ``MetadataLog.open``. The default is the metadata record codec
(``fsm.kraft.records``: Kafka's frame and flexible-version payload); ``BYTES`` passes bytes
through (tests, benchmarks, a shell that keeps records encoded)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsm.kraft.records.codec import decode_record, encode_record


@dataclass(frozen=True, slots=True)
class RecordSerde:
    name: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]


def _bytes_in(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"the bytes serde takes bytes, not {type(value).__name__}")
    return bytes(value)


METADATA = RecordSerde("metadata", encode_record, decode_record)
BYTES = RecordSerde("bytes", _bytes_in, bytes)
