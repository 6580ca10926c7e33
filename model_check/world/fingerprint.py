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
untouched step leaves alone is the very same tuple object, so a search remembers its digest
by the object's identity: the functions take the search's ``digests``
(``model_check.memo.digests.Digests``, ``Memos.digests``); without one they work it out.
Remembering only saves work: the value is a pure function of content, never of ``hash()``
(PYTHONHASHSEED differs between Spark executors) or of ids.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from typing import Protocol

PROTOCOL = 5
_MASK = (1 << 64) - 1


def _weight(i: int) -> int:
    d = hashlib.blake2b(b"kcontrol fingerprint position %d" % i, digest_size=8).digest()
    return int.from_bytes(d, "little") | 1


_WEIGHTS = [_weight(i) for i in range(64)]
"""The position weights: constants of the code (grown by ``_weights`` for longer tuples)."""


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


class DigestSource(Protocol):
    """Where the digests of the parts come from: the search's memo (``Memos.digests``)."""

    def digest(self, part: object) -> bytes: ...

    def word(self, part: object) -> int: ...


def part_digest(part: object, digests: DigestSource | None = None) -> bytes:
    """16-byte blake2b of ``encode(part)`` (remembered by ``digests``, when given)."""
    if digests is not None:
        return digests.digest(part)
    return digest_of(part)[0]


def part_word(part: object, digests: DigestSource | None = None) -> int:
    """The first 8 bytes of ``part_digest(part)`` as an int (little-endian)."""
    if digests is not None:
        return digests.word(part)
    return digest_of(part)[1]


def digest_of(part: object) -> tuple[bytes, int]:
    """``(part_digest(part), part_word(part))``, worked out."""
    d = hashlib.blake2b(encode(part), digest_size=16).digest()
    return d, int.from_bytes(d[:8], "little")


def _word(part: object) -> int:
    return digest_of(part)[1]


class Shared:
    """``shared(value)``: one object per value of a component snapshot (bounded: the table is
    dropped when full). Many worlds hold equal components built afresh by their steps; once
    they are one object, every memo keyed by identity (the search's: ``model_check.memo``)
    is a hit where a new tuple would be pickled and hashed again. Costs one hash of the value.

    **An intern table, not a memo of the search**, and so a module-level one in the world
    (each instance below, one per kind of value, is process-wide): it remembers no answer --
    no result of a core, a ZooKeeper call, a decoding or a check -- only which object stands
    for a value, and hands back a value *equal* to its argument. Whatever it holds, or after
    it is dropped, every world means the same: the snapshots, their fingerprints (content
    only) and every verdict are unchanged; only identities differ, which nothing but the
    memos' hit rates reads. Nothing in it depends on the code of the cores (a mutant's
    values intern like any others), on a search, or on a config, so one process-wide table
    serves every search in the process and needs no owner; it is bounded (``limit``)."""

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


def fingerprint(snapshot: object, digests: DigestSource | None = None) -> int:
    """The 64-bit fingerprint of a builtins-only snapshot (``digests``: the search's memo of
    the parts' digests)."""
    if type(snapshot) is tuple:
        weights = _WEIGHTS if len(snapshot) <= len(_WEIGHTS) else _weights(len(snapshot))
        word = _word if digests is None else digests.word
        return sum(map(int.__mul__, map(word, snapshot), weights)) & _MASK
    return int.from_bytes(hashlib.blake2b(encode(snapshot), digest_size=8).digest(), "little")


class Near:
    """What ``fingerprint_near`` needs of a parent: its fingerprint and its words (and the
    search's ``digests``, for the successors' parts)."""

    __slots__ = ("fp", "snapshot", "word", "words")

    def __init__(self, snapshot: tuple, digests: DigestSource | None = None) -> None:
        self.snapshot = snapshot
        word: Callable[[object], int] = _word if digests is None else digests.word
        self.word = word
        self.words = words = [word(p) for p in snapshot]
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
    word = parent.word
    for i, p in enumerate(snapshot):
        if p is not old[i]:
            fp += (word(p) - words[i]) * _WEIGHTS[i]
    return fp & _MASK


def fingerprint_plain(snapshot: object) -> int:
    """blake2b over a plain ``pickle.dumps`` (the baseline the benchmark reports)."""
    data = pickle.dumps(snapshot, PROTOCOL)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
