"""One-line descriptions of events, effects, requests and ZooKeeper ops (for traces).

Only a world that describes (``World.apply(..., describe=True)``: a scenario's setup, a
replay, a counterexample's transcript) writes them; the search and the walks take ``Quiet``
instead, so nothing here is remembered.
"""

from __future__ import annotations

from fsm import events as E
from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkOp
from fsm.requests import (
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from fsm.values import LeaderAndIsr


def ints(xs: tuple[int, ...] | list[int]) -> str:
    return ",".join(map(str, xs))


def tp_label(tp: tuple[str, int]) -> str:
    return f"{tp[0]}-{tp[1]}"


def data(value: object) -> str:
    if isinstance(value, LeaderAndIsr):
        return f"leader={value.leader} epoch={value.leader_epoch} isr={ints(value.isr)}"
    return type(value).__name__


def op(o: ZkOp) -> str:
    if isinstance(o, CreateOp):
        seq = "seq " if o.sequential else ""
        eph = "eph " if o.ephemeral else ""
        return f"create {eph}{seq}{o.path}"
    if isinstance(o, SetDataOp):
        extra = f" {data(o.data)}" if isinstance(o.data, LeaderAndIsr) else ""
        return f"set {o.path}@{o.version}{extra}"
    if isinstance(o, DeleteOp):
        return f"delete{' -r' if o.recursive else ''} {o.path}"
    if isinstance(o, CheckOp):
        return f"check {o.path}@{o.version}"
    return repr(o)


def request(r: object) -> str:
    return _request(r)


def _request(r: object) -> str:
    if isinstance(r, LeaderAndIsrRequest):
        parts = " ".join(f"{p.topic}-{p.partition}:l={p.leader},e={p.leader_epoch},isr={ints(p.isr)}"
                         for p in r.partitions)
        return f"LeaderAndIsr(ce={r.controller_epoch} be={r.broker_epoch} {parts})"
    if isinstance(r, UpdateMetadataRequest):
        live = ints([b.broker_id for b in r.live_brokers])
        return f"UpdateMetadata(ce={r.controller_epoch} be={r.broker_epoch} " \
               f"parts={len(r.partitions)} live={live})"
    if isinstance(r, StopReplicaRequest):
        parts = ",".join(tp_label(tp) for tp in r.partitions)
        return f"StopReplica(ce={r.controller_epoch} be={r.broker_epoch} " \
               f"delete={str(r.delete_partitions).lower()} {parts})"
    return type(r).__name__


def event(ev: object) -> str:
    if type(ev) is E.RequestReceived:  # the most frequent, and a new object every time
        return request(ev.request)
    return _event(ev)


def _event(ev: object) -> str:  # noqa: C901 -- a flat dispatch
    if isinstance(ev, E.ControllerChange):
        return f"ControllerChange(active={ev.active} epoch={ev.epoch} v={ev.epoch_version})"
    if isinstance(ev, E.BrokerChange):
        live = " ".join(f"{b.broker_id}@{b.epoch}" for b in ev.live)
        return f"BrokerChange({live})"
    if isinstance(ev, E.TopicChange):
        return f"TopicChange({','.join(sorted(ev.names))} new={','.join(t for t, _ in ev.new)})"
    if isinstance(ev, E.PartitionModification):
        return f"PartitionModification({ev.topic} parts={len(ev.assignment.partitions)})"
    if isinstance(ev, E.TopicDeletionRequest):
        return f"TopicDeletionRequest({','.join(sorted(ev.topics))})"
    if isinstance(ev, E.ReassignmentRequest):
        return "ReassignmentRequest(" + " ".join(
            f"{tp_label(tp)}:{ints(r)}" for tp, r in ev.targets) + ")"
    if isinstance(ev, E.PreferredElectionRequest):
        return f"PreferredElectionRequest({','.join(tp_label(t) for t in sorted(ev.partitions))})"
    if isinstance(ev, E.IsrChangeNotification):
        return f"IsrChangeNotification({','.join(ev.notifications)})"
    if isinstance(ev, E.ControlledShutdown):
        return f"ControlledShutdown(broker={ev.request.broker_id} be={ev.request.broker_epoch})"
    if isinstance(ev, E.BrokerResponseReceived):
        return f"{ev.api}Response(from={ev.broker_id} {ev.response.error.name})"
    if isinstance(ev, E.SessionStateChange):
        return f"SessionStateChange({ev.state.value})"
    if isinstance(ev, E.WriteResult):
        fails = " ".join(f"{f.path}:{f.code}" for f in ev.failures)
        return f"WriteResult(token={ev.token}{' fenced' if ev.fenced else ''}" \
               f"{' ' + fails if fails else ''})"
    if isinstance(ev, E.BrokerWriteResult):
        fails = " ".join(f"{f.path}:{f.code}" for f in ev.failures)
        return f"BrokerWriteResult(token={ev.token}{' ' + fails if fails else ''})"
    if isinstance(ev, E.TimerFired):
        return f"TimerFired({ev.kind.value})"
    if isinstance(ev, E.ClusterLoaded):
        s = ev.snapshot
        return f"ClusterLoaded(brokers={ints([b.broker_id for b in s.live_brokers])} " \
               f"topics={','.join(t for t, _ in s.topics)})"
    if isinstance(ev, E.RequestReceived):
        return request(ev.request)
    if isinstance(ev, E.IsrChangeWanted):
        return f"IsrChangeWanted({tp_label(ev.tp)} isr={ints(ev.isr)})"
    if isinstance(ev, E.BrokerRegistered):
        return f"BrokerRegistered(epoch={ev.epoch})"
    if isinstance(ev, E.ControlledShutdownAnswered):
        rem = ",".join(tp_label(t) for t in ev.response.remaining)
        return f"ControlledShutdownAnswered({ev.response.error.name}{' ' + rem if rem else ''})"
    return type(ev).__name__


class Quiet:
    """Stands in for this module when nobody will read the lines (``World.apply(...,
    describe=False)``, as the search does): the costly descriptions become "..."."""

    @staticmethod
    def event(_ev: object) -> str:
        return "..."

    @staticmethod
    def request(_r: object) -> str:
        return "..."

    @staticmethod
    def op(_o: object) -> str:
        return "..."
