"""Metadata answers, encoded once per metadata generation (what a flood of clients costs).

A Metadata answer for 10,000 partitions is half a megabyte; building and encoding it takes
tens of milliseconds, and copying the broker core's cache to build it holds the core's lock.
Clients ask far more often than the cache changes, so ``MetadataAnswers`` keeps, for the
cache as it stands (one *generation*):

- the brokers, the controller id and every topic as the answer's wire values, taken from
  the core once (under its lock) when the generation starts;
- per version asked, the encoded body of the "all topics" answer, and the encoded bytes of
  each topic asked for by name; an answer naming topics is the encoded prefix (throttle,
  brokers, cluster id, controller id), the topics' bytes and the encoded suffix, joined.

The generation changes when the core might answer differently: another core object, a
lifecycle state or broker epoch change (a crash or session expiry empties or keeps the
cache), or an UpdateMetadata applied -- the only request that changes the cache; the
handler that hands requests to the core reports each one (``updated``). LeaderAndIsr and
StopReplica do not start a generation: a controller sending them every few milliseconds
must not make every client's answer be rebuilt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from adapters.network.codec import ApiKey, response_schema
from adapters.network.codec.schema import NO_DEFAULT, Struct
from adapters.network.codec.wire import encode_into
from fsm.broker import BrokerCore, MetadataView, TopicMetadata
from fsm.errors import ErrorCode

Wire = dict[str, Any]
_TOPICS = "topics"


class _Generation:
    """One generation's answers (immutable inputs, encodings added lazily per version)."""

    def __init__(self, key: tuple[Any, ...], head: Wire, topics: dict[str, Wire]) -> None:
        self.key = key
        self.head = head  # every field of the answer but the topics
        self.topics = topics  # name -> the topic's wire value, in name order
        self._all: dict[int, bytes] = {}
        self._parts: dict[int, tuple[bytes, bytes, dict[str, bytes]]] = {}
        self._lock = threading.Lock()

    def body(self, version: int, names: list[str] | None) -> bytes:
        """The encoded answer body: every topic (``names`` None) or the topics named."""
        if names is None:
            cached = self._all.get(version)
            if cached is not None:
                return cached
        with self._lock:  # one thread encodes; the others wait for its bytes
            if names is None:
                if version not in self._all:
                    self._all[version] = self._join(version, list(self.topics))
                return self._all[version]
            return self._join(version, list(dict.fromkeys(names)))

    def _join(self, version: int, names: list[str]) -> bytes:
        prefix, suffix, encoded = self._pieces(version)
        schema = _topic_schema(version)
        out = bytearray(prefix)
        out += len(names).to_bytes(4, "big", signed=True)
        for name in names:
            got = encoded.get(name)
            if got is None:
                topic = self.topics.get(name) or _unknown_topic(name)
                one = bytearray()
                encode_into(one, schema, topic)
                got = bytes(one)
                if name in self.topics:
                    encoded[name] = got
            out += got
        out += suffix
        return bytes(out)

    def _pieces(self, version: int) -> tuple[bytes, bytes, dict[str, bytes]]:
        pieces = self._parts.get(version)
        if pieces is None:
            prefix, suffix = bytearray(), bytearray()
            out = prefix
            for f in response_schema(ApiKey.METADATA, version).fields:
                if f.name == _TOPICS:
                    out = suffix
                    continue
                value = self.head.get(f.name, f.default)
                if value is NO_DEFAULT:
                    raise ValueError(f"Metadata v{version}: no value for {f.name!r}")
                encode_into(out, f.type, value)
            pieces = (bytes(prefix), bytes(suffix), {})
            self._parts[version] = pieces
        return pieces


def _topic_schema(version: int) -> Struct:
    topics = next(f for f in response_schema(ApiKey.METADATA, version).fields
                  if f.name == _TOPICS)
    return topics.type.item  # type: ignore[attr-defined,no-any-return]


def _unknown_topic(name: str) -> Wire:
    return {"error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), "name": name,
            "is_internal": False, "partitions": []}


class MetadataAnswers:
    """The encoded Metadata answers of ``core()`` as it stands (see the module doc).

    ``build(view, topics)`` turns the core's cache into the answer's wire value (the
    handler's ``metadata_response``); ``lock`` is the lock every core call holds."""

    def __init__(self, core: Callable[[], BrokerCore], lock: Any,
                 build: Callable[[MetadataView, tuple[TopicMetadata, ...]], Wire]) -> None:
        self._core = core
        self._lock = lock
        self._build = build
        self._current: _Generation | None = None
        self._updates = 0
        self.generations = 0  # how many times the answer was rebuilt (for tests, metrics)

    def updated(self) -> None:
        """An UpdateMetadata was applied to the core (called under the core's lock)."""
        self._updates += 1

    def body(self, version: int, names: list[str] | None) -> bytes:
        return self._generation().body(version, names)

    def _generation(self) -> _Generation:
        with self._lock:
            core = self._core()
            key = (core, core.state, core.epoch, self._updates)
            current = self._current
            if current is not None and _same(current.key, key):
                return current
            view = core.metadata_cache
            topics = core.topic_metadata(None)
        answer = self._build(view, topics)
        by_name = {t["name"]: t for t in answer.pop(_TOPICS)}
        generation = _Generation(key, answer, by_name)
        self._current = generation
        self.generations += 1
        return generation


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Keys are equal: the core by identity, the rest by value."""
    return a[0] is b[0] and a[1:] == b[1:]
