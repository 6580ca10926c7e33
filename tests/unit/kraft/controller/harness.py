"""A quorum controller on an in-memory, totally ordered log, for the tests: requests in,
answers out, commits when the test says so (``commit()``) or at once (``auto_commit``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.config import QuorumControllerConfig
from fsm.kraft.controller.events import (
    AppendRecords,
    Committed,
    ControllerRequest,
    LeadershipGained,
    LeadershipLost,
    Reply,
    Tick,
)
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import BrokerEndpoint

CLUSTER = "kcontrol-test-cluster"


@dataclass
class Harness:
    auto_commit: bool = True
    ctl: QuorumController = field(default_factory=lambda: QuorumController(
        QuorumControllerConfig(node_id=100, cluster_id=CLUSTER)))
    log: list[Any] = field(default_factory=list)
    replies: dict[int, Any] = field(default_factory=dict)
    effects: list[Any] = field(default_factory=list)
    _token: int = 0
    _ids: int = 1000

    def __post_init__(self) -> None:
        self.feed(LeadershipGained(epoch=1, log_end_offset=0, now_ms=0))

    def feed(self, event: Any) -> list[Any]:
        out = self.ctl.handle(event)
        self.effects += out
        for e in out:
            if isinstance(e, AppendRecords):
                assert e.base_offset == len(self.log), "appends are contiguous"
                self.log += e.records
            elif isinstance(e, Reply):
                self.replies[e.token] = e.response
        if self.auto_commit and self.ctl.active and self.ctl.committed_offset < len(self.log) - 1:
            out += self.feed(Committed(len(self.log) - 1))
        return out

    def commit(self) -> None:
        self.feed(Committed(len(self.log) - 1))

    def send(self, request: Any) -> int:
        self._token += 1
        self.feed(ControllerRequest(self._token, request))
        return self._token

    def ask(self, request: Any) -> Any:
        token = self.send(request)
        assert token in self.replies, f"no answer yet to {request}"
        return self.replies.pop(token)

    def tick(self, now_ms: int) -> None:
        self.feed(Tick(now_ms))

    def lose_leadership(self) -> None:
        self.feed(LeadershipLost(epoch=self.ctl.epoch + 1))
        del self.log[self.ctl.committed_offset + 1:]

    # -- shortcuts ----------------------------------------------------------------------------
    def register(self, broker: int, incarnation: int | None = None, rack: str | None = None
                 ) -> rq.BrokerRegistrationResponse:
        inc = uuid_of(10_000 + broker if incarnation is None else incarnation)
        return self.ask(rq.BrokerRegistrationRequest(
            broker, CLUSTER, inc, (BrokerEndpoint("PLAINTEXT", "localhost", 9000 + broker),),
            rack=rack))

    def heartbeat(self, broker: int, *, want_fence: bool = False, want_shut_down: bool = False,
                  offset: int | None = None) -> rq.BrokerHeartbeatResponse:
        reg = self.ctl.registration(broker)
        assert reg is not None
        return self.ask(rq.BrokerHeartbeatRequest(
            broker, reg.epoch, len(self.log) - 1 if offset is None else offset, want_fence,
            want_shut_down))

    def start_brokers(self, *brokers: int, racks: dict[int, str] | None = None) -> None:
        for b in brokers:
            assert self.register(b, rack=(racks or {}).get(b)).error == 0
        for b in brokers:
            assert not self.heartbeat(b).is_fenced

    def create(self, name: str, partitions: int = 1, factor: int = 3,
               assignments: tuple[tuple[int, tuple[int, ...]], ...] = ()
               ) -> rq.CreatableTopicResult:
        self._ids += 1
        resp = self.ask(rq.CreateTopicsRequest(
            (rq.CreatableTopic(name, partitions, factor, assignments),), (uuid_of(self._ids),)))
        return resp.topics[0]

    def partition(self, name: str, pid: int = 0):  # noqa: ANN201 - a PartitionImage
        t = self.ctl.image.topic(name)
        assert t is not None
        return t.partitions[pid]
