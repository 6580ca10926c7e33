"""Three KRaft brokers against the real quorum controller (``fsm.kraft.controller``, on the
controller tests' in-memory log that commits at once): the facts each side relies on about
the other -- broker epoch and caught-up, fencing, AlterPartition, controlled shutdown -- hold
together, and at quiescence every broker's image equals the controller's committed one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.broker.effects import (
    BecomeFollower,
    BecomeLeader,
    Exit,
    ScheduleHeartbeat,
    SendToController,
    UpdateIsr,
)
from fsm.kraft.broker.events import (
    ControllerResponse,
    HeartbeatDue,
    IsrChangesWanted,
    IsrChangeWanted,
    MetadataFetched,
    SigTerm,
    Start,
)
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import BrokerEndpoint
from tests.unit.kraft.broker.walk import S
from tests.unit.kraft.controller.harness import CLUSTER, Harness


@dataclass
class World:
    h: Harness = field(default_factory=Harness)
    brokers: dict[int, KRaftBroker] = field(default_factory=dict)
    timers: dict[int, int] = field(default_factory=dict)
    seen: dict[int, list[Any]] = field(default_factory=dict)
    now: int = 0

    def start(self, b: int) -> None:
        self.brokers[b] = KRaftBroker(KRaftBrokerConfig(
            b, CLUSTER, (BrokerEndpoint("PLAINTEXT", "localhost", 9000 + b),)))
        self.seen[b] = []
        self.feed(b, Start(uuid_of(5000 + b), self.now))

    def feed(self, b: int, event: Any) -> None:
        for e in self.brokers[b].handle(event):
            self.seen[b].append(e)
            if isinstance(e, SendToController):
                response = self.h.ask(e.request)  # committed at once: answered at once
                self.feed(b, ControllerResponse(e.request, response))
            elif isinstance(e, ScheduleHeartbeat):
                self.timers[b] = self.now + e.delay_ms
            elif isinstance(e, Exit):
                self.timers.pop(b, None)

    def fetch(self) -> None:
        for b, core in self.brokers.items():
            end = self.h.ctl.committed_offset
            if core.state is not S.SHUTTING_DOWN and core.metadata_offset < end:
                start = core.metadata_offset + 1
                self.feed(b, MetadataFetched(start, tuple(self.h.log[start:end + 1])))

    def run(self, until: int) -> None:
        """Fetch, then fire timers in time order, up to ``until`` ms."""
        self.fetch()
        while self.timers and min(self.timers.values()) <= until:
            b = min(self.timers, key=lambda k: (self.timers[k], k))
            self.now = max(self.now, self.timers.pop(b))
            self.h.tick(self.now)
            self.feed(b, HeartbeatDue(self.now))
            self.fetch()

    def effects(self, b: int, kind: type) -> list[Any]:
        out = [e for e in self.seen[b] if isinstance(e, kind)]
        self.seen[b] = [e for e in self.seen[b] if not isinstance(e, kind)]
        return out


def test_three_brokers_run_lead_shrink_and_shut_down_against_the_controller() -> None:
    w = World()
    for b in (1, 2, 3):
        w.start(b)
    w.run(until=100)
    assert {b: c.state for b, c in w.brokers.items()} == {b: S.RUNNING for b in (1, 2, 3)}
    assert all(not w.h.ctl.committed.brokers[b].fenced for b in (1, 2, 3))

    topic = w.h.create("t", partitions=1, factor=3)
    w.run(until=200)
    p = w.h.partition("t")
    leader = p.leader
    assert w.effects(leader, BecomeLeader) == [BecomeLeader(topic.topic_id, 0, 0, p.isr)]
    for b in set(p.replicas) - {leader}:
        assert w.effects(b, BecomeFollower) == [BecomeFollower(topic.topic_id, 0, leader, 0)]

    # the leader shrinks its ISR: answered (committed), then the record changes nothing more
    shrunk = tuple(r for r in p.isr if r != max(set(p.isr) - {leader}))
    w.feed(leader, IsrChangesWanted((IsrChangeWanted(topic.topic_id, 0, shrunk),)))
    assert w.effects(leader, UpdateIsr) == [UpdateIsr(topic.topic_id, 0, 0, 1, shrunk)]
    w.run(until=300)
    assert w.effects(leader, UpdateIsr) == [] and w.h.partition("t").isr == shrunk

    # controlled shutdown of the leader: leadership moves, then the broker exits
    w.feed(leader, SigTerm())
    w.run(until=10_000)
    assert w.brokers[leader].state is S.SHUTTING_DOWN
    new = w.h.partition("t")
    assert new.leader not in (leader, -1)
    assert w.effects(new.leader, BecomeLeader) == [BecomeLeader(topic.topic_id, 0, 1, new.isr)]

    # at quiescence every running broker's image is the controller's committed image
    for b, core in w.brokers.items():
        if b != leader:
            assert core.metadata_offset == w.h.ctl.committed_offset
            assert core.image == w.h.ctl.committed


def test_an_unregistered_broker_registers_again_and_is_unfenced_once_caught_up() -> None:
    from fsm.kraft.controller.requests import UnregisterBrokerRequest

    w = World()
    for b in (1, 2, 3):
        w.start(b)
    w.run(until=100)
    old_epoch = w.brokers[2].broker_epoch
    assert w.h.ask(UnregisterBrokerRequest(2)).error == 0
    w.run(until=10_000)
    core = w.brokers[2]
    assert core.state is S.RUNNING  # its lifecycle never went back
    reg = w.h.ctl.committed.brokers[2]
    assert core.broker_epoch == reg.epoch > old_epoch  # type: ignore[operator]
    assert reg.incarnation_id == uuid_of(5002) and not reg.fenced
    assert core.image == w.h.ctl.committed
