"""Committed and uncommitted state (seed 004's "future state"): nothing the controller has
not seen committed reaches a client; losing leadership reverts to the committed state."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.events import (
    AppendRecords,
    ControllerRequest,
    LeadershipGained,
    Replayed,
    Reply,
)
from fsm.kraft.image import snapshot_records
from fsm.kraft.records.uuid import uuid_of
from tests.unit.kraft.controller.harness import Harness


def test_answers_wait_for_the_commit_of_everything_before_them() -> None:
    h = Harness()
    h.start_brokers(1)
    h.auto_commit = False
    create = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("x", 1, 1),), (uuid_of(1),)))
    read_only = h.send(rq.BrokerHeartbeatRequest(1, h.ctl.registration(1).epoch, 0, False))
    assert create not in h.replies and read_only not in h.replies
    listed = h.send(rq.ListPartitionReassignmentsRequest())
    assert listed in h.replies, "reads of the committed image answer at once"
    h.commit()
    assert create in h.replies and read_only in h.replies


def test_losing_leadership_reverts_and_fails_the_waiting_answers() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    before = snapshot_records(h.ctl.committed)
    h.auto_commit = False
    token = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("x", 1, 2),), (uuid_of(1),)))
    assert h.ctl.image.topic("x") is not None
    h.lose_leadership()
    assert h.replies.pop(token).topics[0].error == ErrorCode.NOT_CONTROLLER
    assert h.ctl.image.topic("x") is None
    assert snapshot_records(h.ctl.image) == before
    assert h.ask(rq.UnregisterBrokerRequest(1)).error == ErrorCode.NOT_CONTROLLER


def test_a_standby_replays_and_takes_over_with_its_image_built() -> None:
    active = Harness()
    active.start_brokers(1, 2, 3)
    active.create("t", 3, 2)
    standby = Harness()
    standby.lose_leadership()
    standby.log.clear()
    standby.feed(Replayed(0, tuple(active.log)))
    assert snapshot_records(standby.ctl.committed) == snapshot_records(active.ctl.committed)
    out = standby.feed(LeadershipGained(epoch=5, log_end_offset=len(active.log), now_ms=0))
    assert out == []
    standby.log[:] = active.log
    reg = standby.ctl.registration(1)
    out = standby.feed(ControllerRequest(99, rq.BrokerHeartbeatRequest(1, reg.epoch,
                                                                       len(active.log), False)))
    assert any(isinstance(e, Reply) and e.token == 99 for e in out)
    resp = standby.ask(rq.DeleteTopicsRequest(("t",)))
    assert resp.topics[0].error == ErrorCode.NONE
    appended = [e for e in standby.effects if isinstance(e, AppendRecords)]
    assert appended[-1].epoch == 5 and appended[-1].base_offset == len(active.log)
