"""The digests memo: each component snapshot's content digest, remembered by identity.

A world snapshot is a flat tuple of components, and a component a step leaves alone is the
very same tuple object as its parent's (``fingerprint.Shared``, the step memo), so the
search's fingerprints (``fingerprint.fingerprint``, ``Near``/``fingerprint_near``) and the
memos keyed by content (``facts``, ``views``, ``steps``: ``(b, digest)``) ask for the digest
of an object already seen: one dict lookup by ``id``. An entry keeps its part alive (an id is
never reused while remembered). Bounded: cleared when full (clearing only costs time).
"""

from __future__ import annotations

from model_check.world.fingerprint import digest_of

LIMIT = 200_000
"""Entries (cleared when full)."""


class Digests:
    """``part -> (part_digest, part_word)`` of one search (``Memos.digests``); what
    ``fingerprint``'s functions take as ``digests``."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[int, tuple[object, bytes, int]] = {}  # id -> (part, digest, word)

    def _entry(self, part: object) -> tuple[object, bytes, int]:
        d, w = digest_of(part)
        table = self.table
        if len(table) >= LIMIT:
            table.clear()
        entry = table[id(part)] = (part, d, w)
        return entry

    def digest(self, part: object) -> bytes:
        """``fingerprint.part_digest(part)``."""
        hit = self.table.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[1]
        return self._entry(part)[1]

    def word(self, part: object) -> int:
        """``fingerprint.part_word(part)``."""
        hit = self.table.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[2]
        return self._entry(part)[2]
