"""``EncodedBatches``: batches as the log holds them on disk, carried in a ``FetchResponse``
instead of ``Batch`` values (see ``wire_records``): what a leader sends a follower is the
bytes its log read, with no record decoded and encoded again on the way."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EncodedBatches:
    """Stands as the one element of a ``FetchResponse``'s ``batches``:
    ``(EncodedBatches(data),)``; the transport's records codec writes ``data`` as it is."""

    data: bytes
