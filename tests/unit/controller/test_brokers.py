"""Broker failure, join, bounce and controlled shutdown."""

from __future__ import annotations

from fsm.controller import ControllerConfig
from fsm.controller.records import Entities
from fsm.effects import RemoveBrokerChannel, ReplyControlledShutdown, SendRequest, SetDataOp
from fsm.errors import ErrorCode
from fsm.events import BrokerChange, ControlledShutdown, WriteResult
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.requests import ControlledShutdownRequest, LeaderAndIsrRequest
from fsm.values import BrokerInfo

from .harness import (
    active,
    broker_change,
    feed,
    lai_to,
    no_illegal,
    sends,
    state,
    stops,
    writes,
)

T0, T1 = ("t", 0), ("t", 1)
_P = PartitionState


def test_failure_elects_from_live_isr_and_shrinks_isr() -> None:
    ctl = active()
    out = broker_change(ctl, 2, 3)
    assert ctl.leader_and_isr(T0).leader == 2 and ctl.leader_and_isr(T0).isr == (2, 3)
    assert ctl.leader_and_isr(T0).leader_epoch == 1
    assert ctl.leader_and_isr(T1).leader == 2 and ctl.leader_and_isr(T1).isr == (2, 3)
    assert ctl.leader_and_isr(T1).leader_epoch == 1  # ISR shrink bumps the epoch too
    assert ctl.replica_state(T0, 1) is ReplicaState.OfflineReplica
    assert RemoveBrokerChannel(1) in out
    (w,) = writes(out)
    assert all(isinstance(op, SetDataOp) and op.version == 0 for op in w.ops)
    assert w.fence_version == 1
    assert lai_to(out, 1) is None and lai_to(out, 2) is not None
    no_illegal(ctl)


def test_last_isr_member_is_kept_and_leader_minus_one() -> None:
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(1, (1,))})
    broker_change(ctl, 2, 3)
    li = ctl.leader_and_isr(T0)
    assert li.leader == -1 and li.isr == (1,) and li.leader_epoch == 1
    assert ctl.partition_state(T0) is PartitionState.OfflinePartition
    # the last ISR member comes back: it leads again
    broker_change(ctl, 1, 2, 3)
    assert ctl.leader_and_isr(T0).leader == 1
    assert ctl.partition_state(T0) is PartitionState.OnlinePartition
    no_illegal(ctl)


def test_unclean_election_when_enabled() -> None:
    cfg = ControllerConfig(broker_id=1, unclean_leader_election_enable=True)
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(1, (1,))}, config=cfg)
    broker_change(ctl, 2, 3)
    assert ctl.leader_and_isr(T0).leader == 2 and ctl.leader_and_isr(T0).isr == (2,)


def test_unclean_bounce_re_elects_the_bounced_isr_member() -> None:
    """A bounce is a failure and a join in one round: the failure half must not take the
    unclean last resort while the join half brings the ISR's only member back."""
    cfg = ControllerConfig(broker_id=1, unclean_leader_election_enable=True)
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(1, (1,))}, config=cfg)
    broker_change(ctl, 1, 2, 3, bounced={1: 999})
    li = ctl.leader_and_isr(T0)
    assert li.leader == 1 and li.isr == (1,) and li.leader_epoch >= 1
    # a failure with a join of another broker, the ISR's member dead: unclean, as before
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(1, (1,))}, live=(1, 3),
                 config=cfg)
    broker_change(ctl, 2, 3)
    li = ctl.leader_and_isr(T0)
    assert li.leader == 2 and li.isr == (2,)
    no_illegal(ctl)


def test_join_gets_full_state_and_replicas_online() -> None:
    ctl = active(live=(2, 3))
    assert ctl.replica_state(T0, 1) is ReplicaState.OfflineReplica
    out = broker_change(ctl, 1, 2, 3)
    req = lai_to(out, 1)
    assert req is not None and {p.tp for p in req.partitions} == {T0, T1}
    assert req.broker_epoch == 101
    assert ctl.replica_state(T0, 1) is ReplicaState.OnlineReplica
    assert {s.broker_id for s in sends(out) if s.request.api == "UpdateMetadata"} == {1, 2, 3}


def test_bounce_is_failure_plus_join_with_new_epoch() -> None:
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(1, (1,))})
    out = broker_change(ctl, 1, 2, 3, bounced={1: 999})
    assert ctl.live_brokers()[1] == 999
    # seed 003: the old incarnation's queue is dropped before any request to the new one
    removes = [i for i, e in enumerate(out) if isinstance(e, RemoveBrokerChannel)]
    assert [out[i] for i in removes] == [RemoveBrokerChannel(1)]
    assert removes[0] < min(i for i, e in enumerate(out)
                            if isinstance(e, SendRequest) and e.broker_id == 1)
    req = lai_to(out, 1)
    assert req is not None and req.broker_epoch == 999
    li = ctl.leader_and_isr(T0)
    assert li.leader == 1 and li.leader_epoch >= 1  # re-elected: a new leader epoch
    assert all(s.request.broker_epoch == 999 for s in sends(out) if s.broker_id == 1)
    no_illegal(ctl)


def test_controlled_shutdown_replies_only_after_the_write() -> None:
    ctl = active()
    ev = ControlledShutdown(ControlledShutdownRequest(1, 101), correlation=7)
    out = ctl.handle(ev)
    assert not any(isinstance(e, ReplyControlledShutdown) for e in out)
    (w,) = writes(out)
    out2 = ctl.handle(WriteResult(w.token))
    (reply,) = [e for e in out2 if isinstance(e, ReplyControlledShutdown)]
    assert reply.correlation == 7 and reply.response.error is ErrorCode.NONE
    assert reply.response.remaining == ()
    assert ctl.leader_and_isr(T0).leader == 2 and 1 not in ctl.leader_and_isr(T0).isr
    assert 1 not in ctl.leader_and_isr(T1).isr  # follower left the ISR
    stop = stops(out2, 1, False)
    assert stop is not None and stop.partitions == (T1,)
    assert 1 in ctl.shutting_down()
    # a shutting-down broker is not eligible as leader
    broker_change(ctl, 1, 3)
    assert ctl.leader_and_isr(T0).leader == 3
    no_illegal(ctl)


def test_controlled_shutdown_stale_epoch_rejected() -> None:
    ctl = active()
    before = ctl.snapshot()
    out = ctl.handle(ControlledShutdown(ControlledShutdownRequest(1, 55), correlation=3))
    (reply,) = out
    assert reply.response.error is ErrorCode.STALE_BROKER_EPOCH
    assert ctl.snapshot() == before


def test_controlled_shutdown_single_replica_partition_remains() -> None:
    ctl = active(topics={"t": {0: (1,), 1: (1, 2)}},
                 states={T0: state(1, (1,)), T1: state(1, (1,))})
    out = feed(ctl, ControlledShutdown(ControlledShutdownRequest(1, 101), correlation=1))
    (reply,) = [e for e in out if isinstance(e, ReplyControlledShutdown)]
    assert reply.response.remaining == (T1,)  # no other ISR member to take over
    assert not sends(out, LeaderAndIsrRequest) or True


def test_bounce_channel_removed_before_requests_in_the_same_list() -> None:
    # broker 3 hosts nothing: no state write, so the requests come from this very handle()
    ctl = active(topics={"t": {0: (1, 2)}})
    out = ctl.handle(BrokerChange((BrokerInfo(1, 101), BrokerInfo(2, 102), BrokerInfo(3, 555))))
    assert ctl.awaiting_write is None
    kinds = [type(e).__name__ for e in out]
    first_send = kinds.index("SendRequest")
    assert out.index(RemoveBrokerChannel(3)) < first_send
    assert all(e.request.broker_epoch == 555 for e in out
               if isinstance(e, SendRequest) and e.broker_id == 3)


def test_bulk_failure_logs_every_entity() -> None:
    topics = {"t": {p: (1 + p % 3, 1 + (p + 1) % 3) for p in range(30)}}
    ctl = active(topics=topics)
    ctl.drain_state_change_log()
    broker_change(ctl, 2, 3)
    log = ctl.drain_state_change_log()
    replicas = {e for r in log if r.kind == "replica" for e in r.entities}
    assert replicas == {(("t", p), 1) for p, reps in topics["t"].items() if 1 in reps}
    assert any(isinstance(r.entity, Entities) for r in log)  # batched
    offline = {e for r in log if r.kind == "partition" and r.target is _P.OfflinePartition
               for e in r.entities}
    assert offline == {("t", p) for p, reps in topics["t"].items() if reps[0] == 1}
    assert all(str(r) for r in log)
    no_illegal(ctl)
