"""A topic znode in the layout Kafka writes it, read without the JSON parser (issue 26).

A failover decodes every topic znode: 10,000 of them, a million replica lists, at 1,000,000
partitions. Kafka (2.4+, ``TopicZNode.encode``) and our encoder write them one way::

    {"version":2,"partitions":{"0":[1,2,3],"1":[2,3,4]},"adding_replicas":{},"removing_replicas":{}}

and Kafka before 2.4 ``{"version":1,"partitions":{...}}``. ``assignment(data)`` reads exactly
those two layouts, with no reassignment in flight, at C level: the partitions object is split
at ``],"`` into ``<id>":[<replicas>`` items, each cut at ``":[`` -- so each item is exactly an
id, the separator and a replica list, and the split reproduces the text. An id or a replica list
(``b"1,2,3"``) is checked when first seen and then memoised (bounded; a cluster repeats a few
thousand replica lists and a few thousand ids): a later one is a dict lookup. Anything else --
other spacing or key order, escapes, reassignments in flight, a value out of range, a partition
twice -- gives None, and ``decode_topic`` reads it with the JSON parser, which also says what is
wrong. What it returns is what ``decode_topic`` returns for the same bytes (held by tests).
"""

from __future__ import annotations

from itertools import repeat
from typing import TypeVar

from adapters.zookeeper.codec.fields import INT32_MAX
from fsm.values import TopicAssignment

_HEADS = (b'{"version":2,"partitions":{"', b'{"version":1,"partitions":{"')
_TAILS = {_HEADS[0]: b']},"adding_replicas":{},"removing_replicas":{}}', _HEADS[1]: b']}}'}
_ITEM = b'],"'
_SEP = b'":['
_HEAD_BYTES = len(_HEADS[0])
_MAX_MEMO = 100_000
V = TypeVar("V")


class _Memo:
    """Checked ids and replica lists by their bytes (bounded: cleared when full)."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.replicas: dict[bytes, tuple[int, ...]] = {}

    def partition_id(self, text: bytes) -> int | None:
        """A partition id (an object key: ASCII digits, at most int32), else None."""
        if not (text.isdigit() and int(text) <= INT32_MAX):  # bytes.isdigit: ASCII only
            return None
        return _put(self.ids, text, int(text))

    def replica_list(self, text: bytes) -> tuple[int, ...] | None:
        """A JSON array of distinct int32 broker ids, not empty, without its brackets (``1,2,3``:
        numbers as JSON writes them, no leading zero), else None."""
        items = text.split(b",")
        if not (all(items) and b"".join(items).isdigit()):
            return None
        if any(len(b) > 1 and b[0] == 48 for b in items):  # 48: "0"
            return None
        ids = tuple(map(int, items))
        if max(ids) > INT32_MAX or len(set(ids)) != len(ids):
            return None
        return _put(self.replicas, text, ids)


def _put(memo: dict[bytes, V], key: bytes, value: V) -> V:
    if len(memo) >= _MAX_MEMO:
        memo.clear()
    memo[key] = value
    return value


_MEMO = _Memo()


def assignment(data: bytes | None) -> TopicAssignment | None:
    """The topic znode's assignment if ``data`` is in one of the two layouts (see the module's
    docstring) with every id and replica list valid, else None."""
    tail = _TAILS.get(data[:_HEAD_BYTES]) if data else None
    if tail is None or len(data) < _HEAD_BYTES + len(tail) or not data.endswith(tail):
        return None
    items = data[_HEAD_BYTES:-len(tail)].split(_ITEM)
    keys, seps, lists = zip(*map(bytes.partition, items, repeat(_SEP)), strict=True)
    if seps.count(_SEP) != len(seps):  # an item without the separator
        return None
    memo = _MEMO
    ids: list[int | None] = list(map(memo.ids.get, keys))
    if None in ids:
        ids = list(map(memo.partition_id, keys))
        if None in ids:
            return None
    replicas: list[tuple[int, ...] | None] = list(map(memo.replicas.get, lists))
    if not all(replicas):  # a replica list is never empty: None is a list not seen yet
        replicas = [r if r is not None else memo.replica_list(t)
                    for r, t in zip(replicas, lists, strict=True)]
        if not all(replicas):
            return None
    if len(set(ids)) != len(ids):  # a partition twice: the parser says so
        return None
    pairs = list(zip(ids, replicas, strict=True))
    if ids != sorted(ids):  # type: ignore[type-var]
        pairs.sort()
    return TopicAssignment(tuple(pairs))  # type: ignore[arg-type]
