"""The templates memo: what ``World.restore`` copies, and the shared components.

A search restores every state it expands once to list its actions and once per successor:
the template of a snapshot (its cores' snapshots by broker id, its ``rest`` decoded, the
cores' restorers: ``world.Template``) is worked out once per snapshot, remembered by the
snapshot's identity, and ``rest`` is decoded once per distinct object (the states sharing a
``rest``). What depends on the config alone -- the broker ids, the restorers, a controller's
fresh snapshot -- is worked out once, when the memo is made. An entry keeps its key object
alive, so the id stays its own.
"""

from __future__ import annotations

from collections.abc import Callable

from model_check.world.codec import Codec
from model_check.world.config import WorldConfig
from model_check.world.cores import fresh_controller_snapshot
from model_check.world.fingerprint import Shared
from model_check.world.world import RestBase, Template, decode_rest, restorers, template

TEMPLATES = 20_000
RESTS = 50_000
SHARED = 100_000
"""Entries per table (cleared when full: clearing only costs time)."""


class Templates:
    """The templates of the worlds of one config."""

    __slots__ = ("codec", "fresh_controller", "ids", "makers", "rests", "shared", "templates")

    def __init__(self, config: WorldConfig, codec: Codec) -> None:
        self.codec = codec
        self.ids: tuple[int, ...] = config.broker_ids
        self.makers: tuple[Callable, Callable] = restorers(config)
        self.fresh_controller: dict[int, tuple] = {
            b: fresh_controller_snapshot(config, b) for b in self.ids}
        """A controller's snapshot when its process starts or dies, by broker id."""
        self.templates: dict[int, tuple[tuple, Template]] = {}
        self.rests: dict[int, RestBase] = {}
        self.shared: dict[int, tuple[tuple, tuple]] = {}

    def template(self, snap: tuple) -> Template:
        """``world.template`` of ``snap``, remembered by its identity."""
        hit = self.templates.get(id(snap))
        if hit is not None and hit[0] is snap:
            return hit[1]
        out = template(snap, self.ids, self.rest, self.makers)
        if len(self.templates) >= TEMPLATES:
            self.templates.clear()
        self.templates[id(snap)] = (snap, out)
        return out

    def rest(self, rest: tuple, ids: tuple[int, ...]) -> RestBase:
        """``world.decode_rest``, remembered by the identity of ``rest``: the worlds
        restored from one state, and the states sharing a ``rest``, decode it once."""
        hit = self.rests.get(id(rest))
        if hit is not None and hit.snap is rest:
            return hit
        hit = decode_rest(rest, ids, self.codec)
        if len(self.rests) >= RESTS:
            self.rests.clear()
        self.rests[id(rest)] = hit
        return hit

    def share(self, part: tuple, shared: Shared) -> tuple:
        """``shared(part)`` (``World.canonical``), remembered by ``part``'s identity first:
        the states of one bundle share their equal components already (``marshal`` refs),
        and hashing a component's value (ZooKeeper's is deep) costs more than one lookup."""
        hit = self.shared.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[1]
        out: tuple = shared(part)  # type: ignore[assignment]
        if len(self.shared) >= SHARED:
            self.shared.clear()
        self.shared[id(part)] = (part, out)
        return out
