"""The codec memo: ``encode``, ``decode`` and ``derived`` remembered by identity.

The world's values are immutable and restored worlds share them, so almost every call
meets an object already seen: the key is ``id(obj)``, the entry keeps ``obj`` alive (an id
is never reused while it is remembered), and a hit is one dict lookup. A value and its
encoding are remembered together in both directions: a decoded znode encodes again as the
very tuple it came from.

The tables live in two generations: when the young one is full it becomes the old one (the
previous old one is dropped), and an entry found in the old one moves back to the young.
What is still in use survives a turnover: a search's memo never falls off a cliff.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_check.world.codec import Codec

LIMIT = 200_000
"""Entries per generation."""
TABLES = LIMIT // 10
"""Entries of ``decoded_dict``'s table (cleared when full)."""
DERIVED = 50_000
"""Entries of each of ``derived``'s tables (cleared when full)."""
_SCALARS = frozenset({int, str, bool, type(None), bytes})


class CodecMemo(Codec):
    """The codec of one search's worlds (``Memos.codec``)."""

    __slots__ = ("dec", "derivations", "enc", "old_dec", "old_enc", "tables")

    def __init__(self) -> None:
        self.enc: dict[int, tuple[object, object]] = {}  # id(value) -> (value, its encoding)
        self.dec: dict[int, tuple[object, object]] = {}  # id(encoding) -> (encoding, value)
        self.old_enc: dict[int, tuple[object, object]] = {}
        self.old_dec: dict[int, tuple[object, object]] = {}
        self.tables: dict[int, tuple[object, dict]] = {}  # ``decoded_dict``, by id(pairs)
        # ``derived``: per function, id(snapshot) -> (snapshot, what the function gave)
        self.derivations: dict[Callable, dict[int, tuple[object, Any]]] = {}

    def _remember(self, obj: object, enc: object) -> None:
        if len(self.enc) >= LIMIT:
            self.old_enc, self.old_dec = self.enc, self.dec
            self.enc, self.dec = {}, {}
        self.enc[id(obj)] = (obj, enc)
        self.dec[id(enc)] = (enc, obj)

    def _old_encoding(self, x: object) -> tuple[object, object] | None:
        hit = self.old_enc.get(id(x))
        if hit is not None and hit[0] is x:
            self._remember(x, hit[1])
            return hit
        return None

    def _old_decoding(self, x: object) -> tuple[object, object] | None:
        hit = self.old_dec.get(id(x))
        if hit is not None and hit[0] is x:
            self._remember(hit[1], x)
            return hit
        return None

    def encode(self, x: Any) -> Any:
        t = type(x)
        if t in _SCALARS:
            return x
        hit = self.enc.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        hit = self._old_encoding(x) if self.old_enc else None
        if hit is not None:
            return hit[1]
        out = self.encode_new(x, t)
        self._remember(x, out)
        return out

    def encode_once(self, x: Any) -> Any:
        """Its parts are remembered as ``encode`` does, the value itself is not --
        remembering every such value would fill the memo and turn it over and over."""
        t = type(x)
        if t in _SCALARS:
            return x
        hit = self.enc.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        hit = self._old_encoding(x) if self.old_enc else None
        if hit is not None:
            return hit[1]
        return self.encode_new(x, t)

    def decode(self, x: Any) -> Any:
        """Often the very object that was encoded."""
        if type(x) is not tuple:
            return x
        hit = self.dec.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        hit = self._old_decoding(x) if self.old_dec else None
        if hit is not None:
            return hit[1]
        out = self.decode_new(x)
        self._remember(out, x)
        return out

    def decoded_dict(self, pairs: tuple) -> dict:
        """Remembered by the identity of ``pairs``: the result is shared."""
        hit = self.tables.get(id(pairs))
        if hit is not None and hit[0] is pairs:
            return hit[1]
        d = Codec.decoded_dict(self, pairs)
        if len(self.tables) >= TABLES:
            self.tables.clear()
        self.tables[id(pairs)] = (pairs, d)
        return d

    def derived(self, fn: Callable[[Any, Codec], Any], snap: tuple) -> Any:
        """Remembered by ``fn`` and the identity of ``snap`` (the entry keeps ``snap`` alive):
        the result is shared."""
        table = self.derivations.get(fn)
        if table is None:
            table = self.derivations[fn] = {}
        hit = table.get(id(snap))
        if hit is not None and hit[0] is snap:
            return hit[1]
        out = fn(snap, self)
        if len(table) >= DERIVED:
            table.clear()
        table[id(snap)] = (snap, out)
        return out
