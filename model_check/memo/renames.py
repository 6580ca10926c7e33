"""The renames memo: what symmetry reduction (``model_check.symmetry``) works out per
component.

Renaming a world (``symmetry.relabel``) walks every component; a step leaves most of them as
they were, so each piece of the work is remembered by the identity of the component (or
value) it was done on, and what else it depends on: a token-free value renamed by a
permutation, the tokens a component holds, the znodes each zxid created, a component renamed
by a permutation and the names of its tokens. An entry keeps its object alive, so the id
stays its own.
"""

from __future__ import annotations

from typing import Any

from model_check.memo.digests import Digests
from model_check.world.codec import Codec

LIMIT = 100_000
"""Entries per table (cleared when full: clearing only costs time)."""


class ByIdentity:
    """Values remembered by ``(an object's identity, a key)``."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[tuple, tuple[object, Any]] = {}

    def get(self, obj: object, key: object = None) -> Any:
        """What ``put`` remembered for ``(obj, key)``, or None."""
        hit = self.table.get((id(obj), key))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: object, key: object, value: Any) -> Any:
        """Remember ``value`` for ``(obj, key)``; returns it."""
        table = self.table
        if len(table) >= LIMIT:
            table.clear()
        table[(id(obj), key)] = (obj, value)
        return value


class RenameMemo:
    """The renaming work of one search (``symmetry.canonicalizer``'s ``memo``)."""

    __slots__ = ("codec", "czxids", "digests", "free", "renamed", "tokens")

    def __init__(self, codec: Codec, digests: Digests | None = None) -> None:
        self.codec = codec
        """The search's codec: the znodes' data the brokers' signatures read."""
        self.digests = digests
        """The search's digests: the renamings' fingerprints."""
        self.free = ByIdentity()
        """A value of a token-free class, by the permutation: its renaming."""
        self.tokens = ByIdentity()
        """A component: ``(zxids, sessions)`` it holds, sorted."""
        self.czxids = ByIdentity()
        """ZooKeeper's component: zxid -> the paths of the znodes it created."""
        self.renamed = ByIdentity()
        """A component, by the permutation and its tokens' names: its renaming."""
