"""64-bit fingerprints of canonical snapshots, stable across processes and sharing.

A snapshot is made only of builtins (``tuple``, ``int``, ``str``, ``bool``, ``None``,
``bytes``; ``codec``). ``encode(value)`` is its pickle (protocol 5) written with
``Pickler.fast = True``: no memo, so every object is written out in full and the bytes
depend only on the value's content -- not on which equal sub-objects are shared, or on
whether a string is interned (a memoising pickle writes a back-reference for the second
occurrence of the *same* object, so equal snapshots with different sharing would get
different bytes). ``marshal`` is no better: from version 3 it writes references for
objects whose refcount is above one and flags interned strings.

``fingerprint(snapshot)`` for a tuple is a two-level hash: the first 8 bytes of blake2b
over the concatenated 16-byte blake2b digests of its elements (``part_digest``); for
anything else, blake2b of ``encode``. A world snapshot is a flat tuple of its components
(ZooKeeper, channels, each controller, each broker core, the rest), and a component an
untouched step leaves alone is the very same tuple object, so its digest comes from a
memo keyed by the object's identity (the memo keeps the object alive: an id is never
reused while cached). The memo only saves work: the value is a pure function of content,
never of ``hash()`` (PYTHONHASHSEED differs between Spark executors) or of ids.
"""

from __future__ import annotations

import hashlib
import io
import pickle

PROTOCOL = 5
_LIMIT = 200_000
_digests: dict[int, tuple[object, bytes]] = {}


def encode(snapshot: object) -> bytes:
    """The canonical bytes of a builtins-only value (a pickle written without memo)."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, PROTOCOL)
    p.fast = True
    p.dump(snapshot)
    return buf.getvalue()


def part_digest(part: object) -> bytes:
    """16-byte blake2b of ``encode(part)``, memoised by identity."""
    hit = _digests.get(id(part))
    if hit is not None and hit[0] is part:
        return hit[1]
    d = hashlib.blake2b(encode(part), digest_size=16).digest()
    if len(_digests) >= _LIMIT:
        _digests.clear()
    _digests[id(part)] = (part, d)
    return d


class Shared:
    """``shared(value)``: one object per value of a component snapshot (bounded: the table is
    dropped when full). Many worlds hold equal components built afresh by their steps; once
    they are one object, its digest here, and every memo keyed by identity, is a hit where a
    new tuple would be pickled and hashed again. Costs one hash of the value."""

    __slots__ = ("_limit", "_table")

    def __init__(self, limit: int = 100_000) -> None:
        self._table: dict[object, object] = {}
        self._limit = limit

    def __call__(self, value: object) -> object:
        table = self._table
        hit = table.get(value)
        if hit is None:
            if len(table) >= self._limit:
                table.clear()
            hit = table[value] = value
        return hit


def fingerprint(snapshot: object) -> int:
    if type(snapshot) is tuple:
        data = b"".join([part_digest(p) for p in snapshot])
    else:
        data = encode(snapshot)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def digests(snapshot: tuple) -> list[bytes]:
    """The part digests a tuple's fingerprint is made of."""
    return [part_digest(p) for p in snapshot]


def fingerprint_near(snapshot: tuple, parent: tuple, parent_digests: list[bytes]) -> int:
    """``fingerprint(snapshot)`` for a snapshot made from ``parent`` by one step: a component
    that is the parent's very object takes the parent's digest (``parent_digests``, from
    ``digests(parent)``) without a lookup. The same value as ``fingerprint``."""
    data = b"".join([d if p is q else part_digest(p)
                     for p, q, d in zip(snapshot, parent, parent_digests, strict=True)])
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def fingerprint_plain(snapshot: object) -> int:
    """blake2b over a plain ``pickle.dumps`` (the baseline the benchmark reports)."""
    data = pickle.dumps(snapshot, PROTOCOL)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
