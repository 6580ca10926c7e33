"""The controller's ZooKeeper session is moved only through ``ZK_SESSION_TABLE`` (seed 000,
"use vanilla ZooKeeper client"): pure calls to ``Controller.handle``."""

from __future__ import annotations

import itertools

from fsm.controller import Controller, ControllerConfig
from fsm.controller.snapshot_fields import CONTROLLER
from fsm.effects import Resigned, ZkWrite
from fsm.events import (
    BrokerChange,
    ControllerChange,
    SessionStateChange,
    Startup,
    TopicDeletionRequest,
    WriteResult,
)
from fsm.zk_session_states import ZK_SESSION_TABLE, ZkClientState

from .harness import active, brokers, writes

Z = ZkClientState
CONNECTING = SessionStateChange(Z.CONNECTING)
CONNECTED = SessionStateChange(Z.CONNECTED)
CLOSED = SessionStateChange(Z.CLOSED)


def moves(ctl: Controller) -> list[tuple[ZkClientState, ZkClientState]]:
    """The session moves logged since the last call (and drains the log)."""
    return [(r.source, r.target) for r in ctl.drain_state_change_log() if r.kind == "session"]


def kinds(ctl: Controller) -> list[str]:
    return [r.kind for r in ctl.drain_state_change_log()]


def started(broker_id: int = 1) -> Controller:
    ctl = Controller(ControllerConfig(broker_id=broker_id))
    ctl.handle(Startup())
    ctl.drain_state_change_log()
    return ctl


def test_a_new_controller_is_not_connected() -> None:
    ctl = Controller(ControllerConfig(broker_id=1))
    assert ctl.session_state is Z.NOT_CONNECTED and not ctl.paused
    assert ctl.snapshot()[CONTROLLER.session] == "NOT_CONNECTED"


def test_startup_records_the_two_moves_of_the_first_connection() -> None:
    ctl = Controller(ControllerConfig(broker_id=1))
    assert ctl.handle(Startup()) == []
    recs = [r for r in ctl.state_change_log if r.kind == "session"]
    assert [(r.source, r.target) for r in recs] == [(Z.NOT_CONNECTED, Z.CONNECTING),
                                                     (Z.CONNECTING, Z.CONNECTED)]
    assert all(r.entity is None and isinstance(r.source, ZkClientState) for r in recs)
    assert ctl.session_state is Z.CONNECTED and not ctl.paused


def test_connecting_pauses_connected_resumes() -> None:
    ctl = active()
    ctl.drain_state_change_log()
    assert ctl.handle(CONNECTING) == []
    assert moves(ctl) == [(Z.CONNECTED, Z.CONNECTING)]
    assert ctl.paused and ctl.session_state is Z.CONNECTING and ctl.is_active
    # while paused nothing is decided: a broker failure changes nothing
    before = ctl.snapshot()
    assert ctl.handle(BrokerChange(brokers(1, 2))) == []
    assert ctl.snapshot() == before and ctl.live_brokers() == {1: 101, 2: 102, 3: 103}
    assert kinds(ctl) == ["info"]
    assert ctl.handle(CONNECTED) == []
    assert moves(ctl) == [(Z.CONNECTING, Z.CONNECTED)]
    assert not ctl.paused and ctl.is_active
    # resumed: the same event is decided now
    out = ctl.handle(BrokerChange(brokers(1, 2)))
    assert writes(out) and ctl.live_brokers() == {1: 101, 2: 102}


def test_closed_while_connecting_discards_everything() -> None:
    ctl = active()
    ctl.handle(CONNECTING)
    ctl.drain_state_change_log()
    out = ctl.handle(CLOSED)
    assert [type(e) for e in out if isinstance(e, Resigned)] == [Resigned]
    assert moves(ctl) == [(Z.CONNECTING, Z.CLOSED)]
    assert not ctl.is_active and not ctl.paused and ctl.topic_names() == frozenset()
    assert ctl.session_state is Z.CLOSED


def test_closed_while_connected_discards_everything() -> None:
    ctl = active()
    ctl.drain_state_change_log()
    out = ctl.handle(CLOSED)
    assert any(isinstance(e, Resigned) for e in out)
    assert moves(ctl) == [(Z.CONNECTED, Z.CLOSED)]
    assert not ctl.is_active and ctl.live_brokers() == {}


def test_closed_of_a_candidate_moves_without_resigning() -> None:
    ctl = started(2)
    assert ctl.handle(CLOSED) == []
    assert moves(ctl) == [(Z.CONNECTED, Z.CLOSED)]


def test_a_fenced_write_leaves_the_session_as_it_is() -> None:
    ctl = active()
    (w,) = writes(ctl.handle(TopicDeletionRequest(frozenset({"ghost"}))))
    ctl.drain_state_change_log()
    out = ctl.handle(WriteResult(w.token, fenced=True))
    assert any(isinstance(e, Resigned) for e in out)
    assert moves(ctl) == [] and ctl.session_state is Z.CONNECTED


def test_out_of_table_moves_are_logged_illegal_and_change_nothing() -> None:
    ctl = active()
    ctl.drain_state_change_log()
    before = ctl.snapshot()
    for ev in (CONNECTED, SessionStateChange(Z.NOT_CONNECTED)):
        assert ctl.handle(ev) == []
        assert kinds(ctl) == ["illegal"]
        assert ctl.snapshot() == before
    ctl.handle(CLOSED)
    ctl.drain_state_change_log()
    closed = ctl.snapshot()
    for ev in (CONNECTING, CONNECTED, CLOSED):  # a closed session does not come back
        assert ctl.handle(ev) == []  # in particular no second Resigned
        assert kinds(ctl) == ["illegal"]
        assert ctl.snapshot() == closed and not ctl.paused


def test_illegal_record_names_the_move() -> None:
    ctl = started()
    ctl.handle(CONNECTED)
    (rec,) = ctl.drain_state_change_log()
    assert (rec.kind, rec.source, rec.target) == ("illegal", "CONNECTED", "CONNECTED")
    assert "valid previous states of CONNECTED: CONNECTING" in rec.reason


def test_startup_after_closed_is_a_new_client() -> None:
    ctl = active()
    ctl.handle(CLOSED)
    ctl.drain_state_change_log()
    assert ctl.handle(Startup()) == []
    log = ctl.drain_state_change_log()
    assert [(r.kind, r.source, r.target) for r in log[:3]] == [
        ("info", "CLOSED", "NOT_CONNECTED"),
        ("session", Z.NOT_CONNECTED, Z.CONNECTING),
        ("session", Z.CONNECTING, Z.CONNECTED)]
    assert ctl.session_state is Z.CONNECTED
    # and it elects again with what it reads
    (w,) = writes(ctl.handle(ControllerChange(None, 1, 1)))
    assert isinstance(w, ZkWrite) and w.fence_version is None


def test_startup_while_connected_or_connecting_changes_nothing() -> None:
    # CONNECTED: no new client, illegal; CONNECTING: paused, not handled at all
    for extra, kind in (((), "illegal"), ((CONNECTING,), "info")):
        ctl = started()
        for ev in extra:
            ctl.handle(ev)
        ctl.drain_state_change_log()
        before = ctl.snapshot()
        assert ctl.handle(Startup()) == []
        assert kinds(ctl) == [kind]
        assert ctl.snapshot() == before


def test_session_state_survives_snapshot_and_restore() -> None:
    ctl = active()
    ctl.handle(CONNECTING)
    snap = ctl.snapshot()
    assert snap[CONTROLLER.session] == "CONNECTING"
    copy = Controller.restore(snap, ctl.config)
    assert copy.paused and copy.session_state is Z.CONNECTING and copy.snapshot() == snap
    assert copy.handle(BrokerChange(brokers(1))) == [] and copy.snapshot() == snap
    assert copy.handle(CONNECTED) == [] and not copy.paused
    assert copy.snapshot() != snap


_EVENTS = (Startup(), CONNECTING, CONNECTED, CLOSED, SessionStateChange(Z.NOT_CONNECTED))


def test_every_sequence_moves_only_through_the_table() -> None:
    """Every sequence of up to 5 session events, from a fresh candidate and from an active
    controller: never raises; one "session" record per change of ``session_state``, each a
    pair of the table (or the new-client reset after CLOSED, which is an info record);
    ``paused`` exactly in CONNECTING."""
    pairs = ZK_SESSION_TABLE.pairs
    for start in ("fresh", "active"):
        for n in range(1, 6):
            for seq in itertools.product(_EVENTS, repeat=n):
                ctl = Controller(ControllerConfig(broker_id=1)) if start == "fresh" \
                    else active()
                ctl.drain_state_change_log()
                for ev in seq:
                    cur = ctl.session_state
                    ctl.handle(ev)
                    recs = [r for r in ctl.drain_state_change_log() if r.kind == "session"]
                    chain = [cur]
                    if recs and cur is Z.CLOSED:
                        chain = [Z.NOT_CONNECTED]  # the new client
                    for r in recs:
                        assert (r.source, r.target) in pairs, (seq, r)
                        assert r.source is chain[-1], (seq, r)
                        chain.append(r.target)
                    assert ctl.session_state is chain[-1], seq
                    assert ctl.paused == (ctl.session_state is Z.CONNECTING)
