"""The world's reads: ``fsm.reads`` over the in-memory ZooKeeper.

The reader is the live service's (``fsm.reads.materialize``); only the port differs:
``WorldReadPort`` reads the world's ``ZooKeeper`` (its znodes hold the values themselves, so
there is nothing to decode) and sets a watch for the reading session. The functions here are
what the world calls through ``World.zk_read`` -- ``reader(zk, *args)``, memoised by the step
memo (``model_check.memo.steps``) by (ZooKeeper's snapshot, this function, the arguments) -- so they are module-level
functions of plain, hashable arguments.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from fsm import reads
from fsm.events import BrokerMetadataLoaded
from fsm.reads import Marker
from fsm.reads.port import StateZnodes, states_by_get_many
from model_check.world.zookeeper import Znode, ZooKeeper


class WorldReadPort:
    """``fsm.reads.ReadPort`` over the world's ZooKeeper; watches for ``session``."""

    __slots__ = ("session", "zk")

    def __init__(self, zk: ZooKeeper, session: int | None = None) -> None:
        self.zk = zk
        self.session = session

    def get(self, path: str, watch: bool = False) -> Znode | None:
        return self.zk.get(path, self.session if watch else None)

    def children(self, path: str, watch: bool = False) -> tuple[str, ...]:
        return self.zk.children(path, self.session if watch else None)

    def get_many(self, paths: Sequence[str], watch: bool = False) -> list[Znode | None]:
        get = self.zk.get
        session = self.session if watch else None
        return [get(p, session) for p in paths]

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterator[StateZnodes]:
        return states_by_get_many(self, topics)


def materialize(zk: ZooKeeper, marker: Marker, active: bool, known_topics: Collection[str],
                session: int) -> object | None:
    """The event ``marker`` stands for (``fsm.reads.materialize``), read by the controller
    whose session is ``session``."""
    return reads.materialize(WorldReadPort(zk, session), marker, active=active,
                             known_topics=known_topics).value


def broker_metadata(zk: ZooKeeper) -> BrokerMetadataLoaded:
    """A starting broker's recovery read."""
    return reads.broker_metadata(WorldReadPort(zk)).value  # type: ignore[no-any-return]


def active_controller(zk: ZooKeeper) -> int | None:
    """Who ``/controller`` names (None: nobody, or nobody known)."""
    active = reads.controller_change(WorldReadPort(zk)).value.active
    return None if active == reads.UNKNOWN_CONTROLLER else active
