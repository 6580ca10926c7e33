"""``fsm.reads``: one reader over two ports.

Random ZooKeeper trees -- with absent znodes, children listed in any order and malformed data --
give the same events, the same skipped-znode reasons and the same watches through a live-style
port (Kafka's bytes, decoded by the live ``ZnodeDecoder``, children scrambled) and through the
world's port (the in-memory ZooKeeper, whose znodes hold the values; a malformed znode holds
``Malformed``, as the live port hands it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.zookeeper import codec
from adapters.zookeeper.reads import ZnodeDecoder
from fsm import reads
from fsm import zk_paths as P
from fsm.events import (
    BrokerChange,
    ClusterLoaded,
    ControllerChange,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TopicChange,
)
from fsm.reads import Malformed, Marker, materialize
from fsm.reads import markers as M
from fsm.reads.port import StateZnodes, states_by_get_many
from fsm.values import Endpoint, LeaderAndIsr, PartitionStateZk, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)
from model_check.world import reads as world_reads
from model_check.world.reads import WorldReadPort
from model_check.world.zookeeper import ZooKeeper


class BytesNode(NamedTuple):
    data: object
    version: int
    czxid: int


class BytesPort:
    """A live-style port: Kafka's bytes per path, decoded by the live adapter's decoder;
    children listed in a scrambled order; the watches it was asked for recorded as ZooKeeper
    would hold them (a child watch only on an existing znode)."""

    def __init__(self, znodes: dict[str, tuple[bytes, int, int]], scramble: int) -> None:
        self.znodes = znodes
        self.scramble = scramble
        self.decode = ZnodeDecoder()
        self.data_watches: set[str] = set()
        self.child_watches: set[str] = set()

    def get(self, path: str, watch: bool = False) -> BytesNode | None:
        if watch:
            assert reads.marker_for(path) is not None, path
            self.data_watches.add(path)
        got = self.znodes.get(path)
        if got is None:
            return None
        return BytesNode(self.decode(path, got[0]), got[1], got[2])

    def children(self, path: str, watch: bool = False) -> list[str]:
        if path not in self.znodes:
            return []
        if watch:
            assert reads.marker_for(path) is not None, path
            self.child_watches.add(path)
        prefix = path + "/"
        names = [p[len(prefix):] for p in self.znodes
                 if p.startswith(prefix) and "/" not in p[len(prefix):]]
        names.sort(reverse=self.scramble % 2 == 1)
        k = self.scramble % (len(names) or 1)
        return names[k:] + names[:k]

    def get_many(self, paths: Sequence[str], watch: bool = False) -> list[BytesNode | None]:
        return [self.get(p, watch) for p in paths]

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterator[StateZnodes]:
        return states_by_get_many(self, topics)


# ---------------------------------------------------------------- random trees

BROKER_IDS = (0, 1, 2, 3, 12)
TOPIC_NAMES = ("a", "b", "t-1", "state")
GARBAGE = (b"", b"{", b"\xff\xfe", b"[1,2]", b'{"version":99}', b"-3")


@st.composite
def trees(draw: st.DrawFn) -> tuple[ZooKeeper, dict[str, bytes]]:
    """A world ZooKeeper, and the garbage written over some of its znodes (path -> bytes)."""
    zk = ZooKeeper()
    for p in P.PERSISTENT_PATHS:
        zk.ensure_path(p)
    brokers = draw(st.lists(st.sampled_from(BROKER_IDS), unique=True, max_size=4))
    for b in brokers:
        rack = draw(st.sampled_from([None, "r1"]))
        zk.create(P.broker(b), BrokerRegistration(b, (Endpoint("PLAINTEXT", "h", 9092 + b),),
                                                  rack))
    if draw(st.booleans()):
        zk.create(P.BROKER_IDS + "/" + draw(st.sampled_from(["007", "x", "-1"])))
    if draw(st.booleans()):
        zk.create(P.CONTROLLER, ControllerZnode(draw(st.sampled_from(BROKER_IDS)), 5))
    if draw(st.booleans()):
        zk.create(P.CONTROLLER_EPOCH, ControllerEpochZnode(draw(st.integers(0, 9))))
        for _ in range(draw(st.integers(0, 2))):
            zk.set_data(P.CONTROLLER_EPOCH, zk.data(P.CONTROLLER_EPOCH))
    replicas = st.lists(st.sampled_from(BROKER_IDS), min_size=1, max_size=3, unique=True
                        ).map(tuple)
    topics = draw(st.lists(st.sampled_from(TOPIC_NAMES), unique=True, max_size=3))
    tps = []
    for t in topics:
        n = draw(st.integers(1, 3))
        zk.create(P.topic(t), TopicAssignment(tuple((p, draw(replicas)) for p in range(n))))
        zk.create(P.partitions(t))
        for p in range(n):
            tps.append((t, p))
            if draw(st.booleans()):
                li = LeaderAndIsr(draw(st.sampled_from((-1, *BROKER_IDS))), draw(
                    st.integers(0, 3)), draw(replicas), draw(st.integers(0, 3)))
                zk.create(P.partition(t, p), make_parents=True)
                zk.create(P.partition_state(t, p), li)
                for _ in range(draw(st.integers(0, 2))):
                    zk.set_data(P.partition_state(t, p), li)
    known_tps = st.sampled_from(tps + [("zz", 0), ("a", 7)])
    for t in draw(st.lists(st.sampled_from((*TOPIC_NAMES, "gone")), unique=True, max_size=2)):
        zk.create(P.delete_topic(t))
    if draw(st.booleans()):
        entries = draw(st.lists(st.tuples(known_tps, replicas), max_size=3,
                                unique_by=lambda e: e[0]))
        zk.create(P.REASSIGN_PARTITIONS, ReassignmentZnode(tuple(entries)), make_parents=True)
    if draw(st.booleans()):
        zk.create(P.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(tuple(draw(
            st.lists(known_tps, max_size=3, unique=True)))), make_parents=True)
    for _ in range(draw(st.integers(0, 3))):
        zk.create(P.isr_change(P.ISR_CHANGE_PREFIX), IsrChangeZnode(tuple(draw(
            st.lists(known_tps, max_size=3, unique=True)))), sequential=True)
    if draw(st.booleans()):
        zk.create(P.isr_change("not_a_notification"))
    valued = [p for p in zk.paths() if not isinstance(zk.data(p), EmptyZnode)]
    bad: dict[str, bytes] = {}
    if valued:
        for p in draw(st.lists(st.sampled_from(valued), unique=True, max_size=3)):
            bad[p] = draw(st.sampled_from(GARBAGE))
    return zk, bad


def ports(zk: ZooKeeper, bad: dict[str, bytes], scramble: int
          ) -> tuple[WorldReadPort, BytesPort, ZooKeeper]:
    """The same tree behind both ports: the world's (a copy, with the malformed znodes holding
    what the live decoder makes of their bytes) and the live-style one (Kafka's bytes)."""
    decode = ZnodeDecoder()
    znodes = {}
    for path in zk.paths():
        node = zk.get(path)
        assert node is not None
        raw = bad.get(path)
        if raw is None:
            if isinstance(node.data, EmptyZnode):
                raw = b""  # parents, deletion markers: data nobody reads
            else:
                raw = codec.encode(path, node.data)
                assert decode(path, raw) == node.data, path  # the codec round-trips the tree
        znodes[path] = (raw, node.version, node.czxid)
    world = ZooKeeper.restore(zk.snapshot())
    for path, raw in bad.items():
        value = decode(path, raw)
        assert isinstance(value, Malformed), (path, raw)
        world.nodes[path] = world.nodes[path]._replace(data=value)
        world.touched(path)
    session = world.open_session()
    return WorldReadPort(world, session), BytesPort(znodes, scramble), world


def markers() -> list[Marker]:
    return [Marker(k) for k in M.MARKERS if k != M.TOPIC] + \
        [Marker(M.TOPIC, t) for t in (*TOPIC_NAMES, "gone")]


def world_watches(zk: ZooKeeper) -> tuple[set[str], set[str]]:
    return {p for _s, p in zk.data_watches}, {p for _s, p in zk.child_watches}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(0, 7), st.lists(st.sampled_from(TOPIC_NAMES), unique=True),
       st.booleans())
def test_random_trees_read_the_same_through_both_ports(
        tree: tuple[ZooKeeper, dict[str, bytes]], scramble: int, known: list[str],
        active: bool) -> None:
    zk, bad = tree
    for marker in markers():
        world, live, wzk = ports(zk, bad, scramble)
        got_world = materialize(world, marker, active=active, known_topics=frozenset(known))
        got_live = materialize(live, marker, active=active, known_topics=frozenset(known))
        assert got_world == got_live, marker
        assert world_watches(wzk) == (live.data_watches, live.child_watches), marker
        for reason in got_live.bad:  # every skip names its znode
            assert reason.startswith("/"), reason
    world, live, _ = ports(zk, bad, scramble)
    assert reads.broker_metadata(world) == reads.broker_metadata(live)
    assert reads.controller_change(world) == reads.controller_change(live)
    assert reads.live_brokers(world) == reads.live_brokers(live)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.integers(0, 7))
def test_events_are_canonical_whatever_the_listing_order(
        tree: tuple[ZooKeeper, dict[str, bytes]], scramble: int) -> None:
    zk, bad = tree
    for marker in markers():
        _, first, _ = ports(zk, bad, 0)
        _, other, _ = ports(zk, bad, scramble)
        known = frozenset({"a"})
        assert materialize(first, marker, active=True, known_topics=known) == \
            materialize(other, marker, active=True, known_topics=known), marker


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([P.CONTROLLER, P.CONTROLLER_EPOCH, P.broker(1), P.topic("a"),
                        P.partition_state("a", 0), P.REASSIGN_PARTITIONS,
                        P.PREFERRED_REPLICA_ELECTION, P.isr_change("isr_change_0000000000")]),
       st.binary(max_size=64) | st.sampled_from(GARBAGE))
def test_malformed_bytes_anywhere_are_skipped_never_raised(path: str, raw: bytes) -> None:
    zk = ZooKeeper()
    for p in P.PERSISTENT_PATHS:
        zk.ensure_path(p)
    zk.create(P.broker(1), BrokerRegistration(1))
    zk.create(P.topic("a"), TopicAssignment(((0, (1,)),)))
    zk.create(P.partition_state("a", 0), LeaderAndIsr(1, 0, (1,), 1), make_parents=True)
    zk.create(P.isr_change("isr_change_0000000000"), IsrChangeZnode((("a", 0),)))
    if zk.get(path) is None:
        zk.create(path, EmptyZnode(), make_parents=True)
    decode = ZnodeDecoder()
    if not isinstance(decode(path, raw), Malformed):
        return  # bytes that happen to be good data
    _, live, _ = ports(zk, {path: raw}, 1)
    reported = []
    for marker in markers():
        got = materialize(live, marker, active=True, known_topics=frozenset({"a"}))
        assert all(r.startswith(path + ": ") for r in got.bad), got.bad
        reported += got.bad
        if marker.kind == M.LOAD:
            assert got.value.snapshot.bad_input == got.bad
    assert reported, "some read reports the malformed znode"


# ---------------------------------------------------------------- chosen behaviours


def small_tree() -> ZooKeeper:
    zk = ZooKeeper()
    for p in P.PERSISTENT_PATHS:
        zk.ensure_path(p)
    for b in (3, 1, 2):
        zk.create(P.broker(b), BrokerRegistration(b))
    return zk


def test_absent_admin_znodes_are_no_event_and_present_ones_are_sorted() -> None:
    zk = small_tree()
    port = WorldReadPort(zk, zk.open_session())
    assert materialize(port, Marker(M.REASSIGN), active=True).value is None
    assert materialize(port, Marker(M.PREFERRED), active=True).value is None
    zk.create(P.REASSIGN_PARTITIONS, ReassignmentZnode(((("b", 0), (1,)), (("a", 1), (2,)))),
              make_parents=True)
    zk.create(P.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode((("a", 0),)))
    assert materialize(port, Marker(M.REASSIGN), active=True).value == ReassignmentRequest(
        ((("a", 1), (2,)), (("b", 0), (1,))))
    assert materialize(port, Marker(M.PREFERRED), active=True).value == \
        PreferredElectionRequest(frozenset({("a", 0)}))
    # and the failover load, which reads them too
    snap = materialize(port, Marker(M.LOAD), active=True).value.snapshot
    assert snap.reassignments == ((("a", 1), (2,)), (("b", 0), (1,)))


def test_brokers_by_id_and_bad_names_skipped() -> None:
    zk = small_tree()
    zk.create(P.BROKER_IDS + "/007")
    zk.nodes[P.broker(2)] = zk.nodes[P.broker(2)]._replace(data=Malformed("/brokers/ids/2: x"))
    got = materialize(WorldReadPort(zk, zk.open_session()), Marker(M.BROKERS), active=True)
    assert isinstance(got.value, BrokerChange)
    assert [b.broker_id for b in got.value.live] == [1, 3]
    assert got.bad == ("/brokers/ids/007: not a broker id (broker skipped)",
                       "/brokers/ids/2: x (broker 2 skipped)")


def test_a_value_of_the_wrong_type_is_skipped_with_a_reason() -> None:
    zk = small_tree()
    zk.create(P.topic("a"), ControllerEpochZnode(3))
    got = materialize(WorldReadPort(zk, zk.open_session()), Marker(M.TOPICS), active=True)
    assert got.value == TopicChange(frozenset({"a"}), ())
    assert got.bad == ("/brokers/topics/a: holds ControllerEpochZnode, not TopicAssignment "
                       "(topic 'a' skipped)",)


def test_malformed_controller_znodes_make_the_controller_unknown() -> None:
    zk = small_tree()
    zk.create(P.CONTROLLER_EPOCH, ControllerEpochZnode(4))
    port = WorldReadPort(zk, zk.open_session())
    assert materialize(port, Marker(M.CONTROLLER), active=False).value == \
        ControllerChange(None, 4, 0)
    zk.create(P.CONTROLLER, Malformed("/controller: bad"))
    assert materialize(port, Marker(M.CONTROLLER), active=False).value == \
        ControllerChange(reads.UNKNOWN_CONTROLLER, 4, 0)
    zk.delete(P.CONTROLLER)
    zk.set_data(P.CONTROLLER_EPOCH, Malformed("/controller_epoch: bad"))
    zk.data_watches.clear()
    got = materialize(port, Marker(M.CONTROLLER), active=False)
    assert got.value == ControllerChange(reads.UNKNOWN_CONTROLLER, 0, 1)
    # the epoch is watched (with /controller's marker): its repair brings the election
    assert {p for _s, p in zk.data_watches} == {P.CONTROLLER, P.CONTROLLER_EPOCH}
    assert reads.marker_for(P.CONTROLLER_EPOCH) == reads.CONTROLLER_MARKER


def test_an_unknown_topic_marker_reads_the_topic_list() -> None:
    """A topic znode skipped as malformed and then repaired: its data watch fires, and the
    controller that does not know the topic gets it as a new topic."""
    zk = small_tree()
    zk.create(P.topic("a"), TopicAssignment(((0, (1,)),)))
    port = WorldReadPort(zk, zk.open_session())
    a = TopicAssignment(((0, (1,)),))
    assert materialize(port, Marker(M.TOPIC, "a"), active=True,
                       known_topics=frozenset({"a"})).value == PartitionModification("a", a)
    assert materialize(port, Marker(M.TOPIC, "a"), active=True).value == \
        TopicChange(frozenset({"a"}), (("a", a),))
    assert materialize(port, Marker(M.TOPIC, "gone"), active=True,
                       known_topics=frozenset({"a", "gone"})).value is None


def test_partition_states_follow_the_assignments_and_share_values() -> None:
    zk = small_tree()
    zk.create(P.topic("a"), TopicAssignment(((0, (1,)), (1, (1,)), (2, (1,)))))
    li = LeaderAndIsr(1, 0, (1,), 1)
    for p in (0, 1, 3):  # 2 has no state yet (New); 3 is not assigned: not read
        zk.create(P.partition_state("a", p), li, make_parents=True)
    snap = materialize(WorldReadPort(zk, zk.open_session()), Marker(M.LOAD),
                       active=True).value.snapshot
    assert [tp for tp, _ in snap.partition_states] == [("a", 0), ("a", 1)]
    first, second = (s for _, s in snap.partition_states)
    assert first == second == PartitionStateZk(li, 0) and first is second


def test_isr_notifications_sorted_and_listed_even_when_malformed() -> None:
    zk = small_tree()
    zk.create(P.topic("a"), TopicAssignment(((0, (1,)),)))
    zk.create(P.partition_state("a", 0), LeaderAndIsr(1, 0, (1,), 1), make_parents=True)
    zk.create(P.isr_change("isr_change_0000000002"), IsrChangeZnode((("a", 0),)))
    zk.create(P.isr_change("isr_change_0000000001"), Malformed("bad"))
    got = materialize(WorldReadPort(zk, zk.open_session()), Marker(M.ISR_CHANGE), active=True)
    assert got.value == IsrChangeNotification(
        ("isr_change_0000000001", "isr_change_0000000002"),
        ((("a", 0), PartitionStateZk(LeaderAndIsr(1, 0, (1,), 1), 0)),))
    assert got.bad == ("bad (ISR change notification skipped)",)


def test_controller_only_markers_are_not_read_by_a_candidate() -> None:
    zk = small_tree()
    port = WorldReadPort(zk, zk.open_session())
    for kind, row in M.MARKERS.items():
        got = materialize(port, Marker(kind), active=False)
        assert (got.value is None) == row.controller_only, kind
    assert not zk.child_watches and {p for _s, p in zk.data_watches} == {P.CONTROLLER}


def test_unknown_marker_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown marker"):
        materialize(WorldReadPort(small_tree()), Marker("nope"), active=True)


def test_the_world_reads_are_the_shared_reader() -> None:
    zk = small_tree()
    zk.create(P.CONTROLLER, ControllerZnode(2))
    s = zk.open_session()
    assert world_reads.materialize(zk, Marker(M.BROKERS), True, frozenset(), s) == \
        materialize(WorldReadPort(zk, s), Marker(M.BROKERS), active=True).value
    assert isinstance(world_reads.materialize(zk, reads.LOAD_MARKER, True, frozenset(), s),
                      ClusterLoaded)
    assert world_reads.active_controller(zk) == 2
    zk.set_data(P.CONTROLLER, Malformed("/controller: bad"))
    assert world_reads.active_controller(zk) is None
