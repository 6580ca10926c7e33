"""Encode the partition states a controller event sends to several brokers once.

One broker failure that moves 10,000 leaderships sends every live broker a LeaderAndIsr and
an UpdateMetadata of the same 10,000 partition states; the requests differ only in the
target's broker epoch (and LeaderAndIsr's live leaders). Each broker's sender thread used to
convert and encode its own copy: with two live brokers, half of that work was repeated, on
the controller's critical path (one interpreter lock for every sender).

``SharedEncodings.topic_states`` returns the ``topic_states`` array of a request encoded
once (``wire.Encoded``) for every request that carries *the same partition objects* -- the
controller's ``RequestBatch`` builds each partition's entry once and shares it across the
brokers. The key is the identity of every partition value; each entry keeps its partitions
alive, so an identity in the key cannot be reused by another object while the entry exists.
Bounded (``capacity`` entries, least recently used dropped first) and thread-safe: a race
only encodes twice. Requests of fewer than ``min_partitions`` partitions are not memoised.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from adapters.network.codec.registry import APIS
from adapters.network.codec.schema import Array
from adapters.network.codec.wire import Encoded


def array_type(api_key: int, version: int, field: str) -> Array:
    """The type of a request's top-level array field ``field``."""
    for f in APIS[api_key].request.schema(version).fields:
        if f.name == field and isinstance(f.type, Array):
            return f.type
    raise KeyError(f"api {api_key} v{version} has no array field {field!r}")


class SharedEncodings:
    def __init__(self, capacity: int = 8, min_partitions: int = 64) -> None:
        self.capacity = capacity
        self.min_partitions = min_partitions
        self._memo: OrderedDict[tuple[Any, ...], tuple[Sequence[object], Encoded]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def topic_states(self, api_key: int, version: int, partitions: Sequence[object],
                     convert: Callable[[Any], Any]) -> Any:
        """``topic_states`` for a request carrying ``partitions``: an ``Encoded`` array shared
        with earlier requests of the same partition objects, or ``convert(partitions)`` (the
        wire value, encoded by the caller) when the request is small."""
        if len(partitions) < self.min_partitions:
            return convert(partitions)
        key = (api_key, version, tuple(map(id, partitions)))
        with self._lock:
            entry = self._memo.get(key)
            if entry is not None:
                self._memo.move_to_end(key)
                self.hits += 1
                return entry[1]
        encoded = Encoded(array_type(api_key, version, "topic_states"), convert(partitions))
        with self._lock:
            self.misses += 1
            self._memo[key] = (partitions, encoded)
            while len(self._memo) > self.capacity:
                self._memo.popitem(last=False)
        return encoded
