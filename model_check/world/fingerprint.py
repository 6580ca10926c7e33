"""64-bit fingerprints of canonical snapshots, stable across processes and sharing.

A snapshot is made only of builtins (``tuple``, ``int``, ``str``, ``bool``, ``None``,
``bytes``; ``codec``). ``encode(value)`` is its pickle (protocol 5) written with
``Pickler.fast = True``: no memo, so every object is written out in full and the bytes
depend only on the value's content -- not on which equal sub-objects are shared, or on
whether a string is interned (a memoising pickle writes a back-reference for the second
occurrence of the *same* object, so equal snapshots with different sharing would get
different bytes). ``marshal`` is no better: from version 3 it writes references for
objects whose refcount is above one and flags interned strings.

``fingerprint(snapshot)`` for a tuple is a two-level hash: each element has a 16-byte
blake2b digest (``part_digest``) whose first 8 bytes are its *word*, and the fingerprint is
the sum, modulo 2**64, of each word times an odd 64-bit weight fixed for its position
(``_weight``: blake2b of the position) -- a Zobrist-style hash: the words are uniformly
random, each weighted word is too (an odd multiplier permutes 64-bit values), and so is
their sum, so two different tuples collide with probability 2**-64 as with any 64-bit hash.
A successor that changed a few components then gets its fingerprint from its parent's by
adding the changed terms (``fingerprint_near``). For anything else, blake2b of ``encode``. A world snapshot is a flat tuple of its components
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
_digests: dict[int, tuple[object, bytes, int]] = {}  # id -> (part, digest, word)
_MASK = (1 << 64) - 1


def _weight(i: int) -> int:
    d = hashlib.blake2b(b"kcontrol fingerprint position %d" % i, digest_size=8).digest()
    return int.from_bytes(d, "little") | 1


_WEIGHTS = [_weight(i) for i in range(64)]  # grown by ``_weights`` for longer tuples


def _weights(n: int) -> list[int]:
    while len(_WEIGHTS) < n:
        _WEIGHTS.append(_weight(len(_WEIGHTS)))
    return _WEIGHTS


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
    return _digest(part)[1]


def part_word(part: object) -> int:
    """The first 8 bytes of ``part_digest(part)`` as an int (little-endian)."""
    hit = _digests.get(id(part))
    if hit is not None and hit[0] is part:
        return hit[2]
    return _digest(part)[2]


def _digest(part: object) -> tuple[object, bytes, int]:
    d = hashlib.blake2b(encode(part), digest_size=16).digest()
    if len(_digests) >= _LIMIT:
        _digests.clear()
    entry = _digests[id(part)] = (part, d, int.from_bytes(d[:8], "little"))
    return entry


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
        weights = _WEIGHTS if len(snapshot) <= len(_WEIGHTS) else _weights(len(snapshot))
        return sum(map(int.__mul__, map(part_word, snapshot), weights)) & _MASK
    return int.from_bytes(hashlib.blake2b(encode(snapshot), digest_size=8).digest(), "little")


class Near:
    """What ``fingerprint_near`` needs of a parent: its fingerprint and its words."""

    __slots__ = ("fp", "snapshot", "words")

    def __init__(self, snapshot: tuple) -> None:
        self.snapshot = snapshot
        self.words = words = [part_word(p) for p in snapshot]
        weights = _WEIGHTS if len(words) <= len(_WEIGHTS) else _weights(len(words))
        self.fp = sum(map(int.__mul__, words, weights)) & _MASK  # ``fingerprint(snapshot)``


def fingerprint_near(snapshot: tuple, parent: Near) -> int:
    """``fingerprint(snapshot)`` for a snapshot made from ``parent.snapshot`` by one step:
    the parent's fingerprint with the terms of the components that are not the parent's
    very objects exchanged. The same value as ``fingerprint``."""
    fp = parent.fp
    old = parent.snapshot
    if len(snapshot) != len(old):
        return fingerprint(snapshot)
    words = parent.words
    for i, p in enumerate(snapshot):
        if p is not old[i]:
            fp += (part_word(p) - words[i]) * _WEIGHTS[i]
    return fp & _MASK


def fingerprint_plain(snapshot: object) -> int:
    """blake2b over a plain ``pickle.dumps`` (the baseline the benchmark reports)."""
    data = pickle.dumps(snapshot, PROTOCOL)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
