"""``fsm.reads.markers.MARKERS``: the one table of watches and markers, as the live service and
the world use it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from adapters.controller import ControllerService
from adapters.controller.event_queue import Marker as QueueMarker
from fsm import zk_paths as P
from fsm.reads import CONTROLLER_ONLY, MARKERS, Marker, marker_for, materialize, notified
from fsm.reads import markers as M
from fsm.values import TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)
from model_check.world import state as S
from model_check.world.reads import WorldReadPort
from model_check.world.zookeeper import ZooKeeper


def test_every_watched_path_maps_back_to_its_row() -> None:
    for kind, row in MARKERS.items():
        for path in row.paths:
            arg = "t" if M.ARG in path else ""
            assert marker_for(path.replace(M.ARG, arg)) == Marker(kind, arg), path
        assert (row.watch == M.NO_WATCH) == (not row.paths), kind


@pytest.mark.parametrize("path", ["/brokers/topics/", "/brokers/topics/t/partitions",
                                  P.partition_state("t", 0), P.broker(1), P.delete_topic("t"),
                                  P.isr_change("isr_change_0000000001"), "/admin", "/"])
def test_other_paths_queue_nothing(path: str) -> None:
    assert marker_for(path) is None


def test_notifications_queue_by_the_table() -> None:
    for kind in (M.CREATED, M.DELETED, M.CHANGED):
        assert notified(P.CONTROLLER, kind) == M.CONTROLLER_MARKER
        assert notified(P.REASSIGN_PARTITIONS, kind) == Marker(M.REASSIGN)
    assert notified(P.BROKER_IDS, M.CHILDREN) == Marker(M.BROKERS)
    # Kafka's PartitionModificationsHandler reacts to data changes only
    assert notified(P.topic("t"), M.CHANGED) == Marker(M.TOPIC, "t")
    assert notified(P.topic("t"), M.CREATED) is None
    assert notified(P.topic("t"), M.DELETED) is None


def test_only_the_controller_marker_survives_a_resignation() -> None:
    assert set(MARKERS) - CONTROLLER_ONLY == {M.CONTROLLER}
    assert M.survives_resignation(M.CONTROLLER_MARKER)
    assert not M.survives_resignation(M.LOAD_MARKER)


def test_one_marker_type_live_and_in_the_world() -> None:
    assert QueueMarker is Marker and S.Marker is Marker
    assert S.LOAD_MARKER is M.LOAD_MARKER and S.CONTROLLER_MARKER is M.CONTROLLER_MARKER


def test_the_watches_a_failover_sets_are_the_tables() -> None:
    """After a cluster load, every watch the controller's session holds is a row's path,
    set the row's way; and every row that watches something is watched."""
    zk = ZooKeeper()
    for p in P.PERSISTENT_PATHS:
        zk.ensure_path(p)
    zk.create(P.broker(1), BrokerRegistration(1))
    zk.create(P.topic("t"), TopicAssignment(((0, (1,)),)))
    zk.create(P.CONTROLLER_EPOCH, ControllerEpochZnode(1))
    zk.create(P.REASSIGN_PARTITIONS, ReassignmentZnode(()))
    zk.create(P.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(()))
    port = WorldReadPort(zk, zk.open_session())
    materialize(port, M.CONTROLLER_MARKER, active=False)
    materialize(port, M.LOAD_MARKER, active=True)
    watched = {(p, M.EXISTS) for _s, p in zk.data_watches} | \
        {(p, M.GET_CHILDREN) for _s, p in zk.child_watches}
    for path, how in watched:
        marker = marker_for(path)
        assert marker is not None and MARKERS[marker.kind].watch == how, path
    kinds = {marker_for(p).kind for p, _ in watched}  # type: ignore[union-attr]
    assert kinds == {k for k, row in MARKERS.items() if row.paths}


@pytest.fixture
def service() -> Iterator[ControllerService]:
    svc = ControllerService(1, "127.0.0.1:1")  # never started: no connection
    yield svc
    svc._close_client()


def _event(kind: str, path: str) -> WatchedEvent:
    return WatchedEvent(kind, KeeperState.CONNECTED, path)


def test_the_live_watchers_follow_the_table(service: ControllerService) -> None:
    topic = service._watch(M.TOPIC, "t")
    assert topic is not None
    topic(_event(EventType.CREATED, P.topic("t")))
    topic(_event(EventType.DELETED, P.topic("t")))
    assert service.queue.size == 0
    topic(_event(EventType.CHANGED, P.topic("t")))
    assert service.queue.size == 1 and service.queue.get()[0] == Marker(M.TOPIC, "t")
    brokers = service._watch(M.BROKERS)
    assert brokers is not None
    brokers(_event(EventType.CHILD, P.BROKER_IDS))
    assert service.queue.size == 1 and service.queue.get()[0] == Marker(M.BROKERS)
    # a lost connection calls every watcher with NONE: everything is read again
    topic(WatchedEvent(EventType.NONE, KeeperState.CONNECTING, None))
    assert service.queue.size == 1 and service.queue.get()[0] == Marker(M.TOPIC, "t")
