"""Controller requests at the broker: LeaderAndIsr, StopReplica, UpdateMetadata (seed 001 C).

Each request is answered with one ``Respond``. In order:

1. not serving (only RUNNING and PENDING_CONTROLLED_SHUTDOWN serve) -> BROKER_NOT_AVAILABLE;
2. a value that is not one of the three requests -> INVALID_REQUEST;
3. the epoch fences (``epoch_fencing``) -> STALE_BROKER_EPOCH / STALE_CONTROLLER_EPOCH;
4. a malformed request as a whole (duplicate partitions; for UpdateMetadata any malformed
   partition or broker, since its answer has no per-partition errors) -> INVALID_REQUEST;
5. applied: the controller epoch becomes the highest seen, the applied mark is set, and
   LeaderAndIsr/StopReplica answer per partition.

A request-level error leaves the state untouched; its answer repeats the error for every
partition named (as Kafka's ``getErrorResponse``), except UpdateMetadata which has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.broker.epoch_fencing import epoch_error
from fsm.broker.replicas import decide_leader_and_isr, stopped
from fsm.broker.validation import duplicate, is_int, tp_reason
from fsm.broker.views import AppliedMark, AppliedRecord
from fsm.effects import BrokerEffect, Respond
from fsm.errors import ErrorCode
from fsm.events import RequestReceived
from fsm.requests import (
    ControllerResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from fsm.values import TopicPartition

if TYPE_CHECKING:
    from fsm.broker.core import BrokerCore

_REQUESTS = (LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest)
REQUESTS: tuple[str, ...] = tuple(t.__name__ for t in _REQUESTS)
"""The controller requests a broker applies, by class name."""


def _named(req: object) -> tuple[TopicPartition, ...]:
    """The partitions a request names, deduplicated and sorted (for error answers)."""
    parts = getattr(req, "partitions", ())
    if not isinstance(parts, tuple):
        return ()
    if isinstance(req, LeaderAndIsrRequest):
        tps = [p.tp for p in parts if isinstance(p, LeaderAndIsrPartition)]
    elif isinstance(req, StopReplicaRequest):
        tps = list(parts)
    else:
        return ()
    return tuple(sorted({tp for tp in tps if tp_reason(tp) is None}))


def error_response(req: object, code: ErrorCode) -> ControllerResponse:
    api = getattr(req, "api", "unknown")
    return ControllerResponse(api if isinstance(api, str) else "unknown", code,
                              tuple((tp, code) for tp in _named(req)))


def _request_reason(core: BrokerCore, req: object) -> str | None:
    """Why the request as a whole is malformed, or None."""
    if isinstance(req, UpdateMetadataRequest):
        return core._cache.reject_reason(req)
    parts = req.partitions  # type: ignore[attr-defined]
    if not isinstance(parts, tuple):
        return "partitions is not a list"
    if isinstance(req, LeaderAndIsrRequest):
        if not all(isinstance(p, LeaderAndIsrPartition) for p in parts):
            return "a partition state is not a LeaderAndIsr partition"
        tps = [p.tp for p in parts]
    else:
        tps = list(parts)
    for tp in tps:
        reason = tp_reason(tp)
        if reason is not None:
            return f"{tp!r}: {reason}"
    dup = duplicate(tps)
    return None if dup is None else f"{dup[0]}-{dup[1]} named twice"


def handle_request(core: BrokerCore, ev: RequestReceived) -> list[BrokerEffect]:
    req = ev.request
    if not core.is_serving:
        core._record("rejected", "request", f"{getattr(req, 'api', '?')} while {core._state.value}")
        return [Respond(ev.correlation, error_response(req, ErrorCode.BROKER_NOT_AVAILABLE))]
    if not isinstance(req, _REQUESTS):
        core._record("rejected", "request", f"not a controller request: {type(req).__name__}")
        return [Respond(ev.correlation, error_response(req, ErrorCode.INVALID_REQUEST))]
    if not (is_int(req.broker_epoch) and is_int(req.controller_epoch)
            and is_int(req.controller_id)):
        core._record("rejected", req.api, "INVALID_REQUEST: non-integer epoch or controller id")
        return [Respond(ev.correlation, error_response(req, ErrorCode.INVALID_REQUEST))]
    code = epoch_error(core._epoch, core._controller_epoch, req.broker_epoch, req.controller_epoch)
    if code is not ErrorCode.NONE:
        core._record("rejected", req.api,
                     f"{code.name}: stamped broker epoch {req.broker_epoch} controller epoch "
                     f"{req.controller_epoch}; own epoch {core._epoch}, highest controller "
                     f"epoch {core._controller_epoch}")
        return [Respond(ev.correlation, error_response(req, code))]
    reason = _request_reason(core, req)
    if reason is not None:
        core._record("rejected", req.api, f"INVALID_REQUEST: {reason}")
        return [Respond(ev.correlation, error_response(req, ErrorCode.INVALID_REQUEST))]
    _mark_applied(core, req.api, req.controller_epoch, req.broker_epoch, ev.correlation)
    if isinstance(req, LeaderAndIsrRequest):
        errors = _leader_and_isr(core, req)
    elif isinstance(req, StopReplicaRequest):
        errors = _stop_replica(core, req)
    else:
        core._cache.apply(req)
        errors = ()
    return [Respond(ev.correlation, ControllerResponse(req.api, ErrorCode.NONE, errors))]


def _mark_applied(core: BrokerCore, api: str, controller_epoch: int, broker_epoch: int,
                  correlation: int) -> None:
    core._applied = AppliedMark(controller_epoch, broker_epoch, core._controller_epoch)
    core._controller_epoch = max(core._controller_epoch, controller_epoch)
    core._applied_log.append(AppliedRecord(api, controller_epoch, broker_epoch, correlation))


def _leader_and_isr(core: BrokerCore,
                    req: LeaderAndIsrRequest) -> tuple[tuple[TopicPartition, ErrorCode], ...]:
    own = core.config.broker_id
    replicas = core._replicas
    errors = []
    for p in req.partitions:
        tp = p.tp
        code, new = decide_leader_and_isr(own, replicas.get(tp), p)
        if new is not None:
            replicas[tp] = new
            core._record("applied", f"{tp[0]}-{tp[1]}",
                         f"{new.role.value} leader {new.leader} epoch {new.leader_epoch} "
                         f"isr {list(new.isr)} zk version {new.zk_version}")
        elif code is not ErrorCode.NONE:
            core._record("ignored", f"{tp[0]}-{tp[1]}", f"LeaderAndIsr: {code.name}")
        errors.append((tp, code))
    errors.sort()
    return tuple(errors)


def _stop_replica(core: BrokerCore,
                  req: StopReplicaRequest) -> tuple[tuple[TopicPartition, ErrorCode], ...]:
    """Stop (delete=false) or forget (delete=true). A partition the broker does not hold is
    answered NONE: stopping is idempotent, and an error would make the controller's topic
    deletion mark the replica ineligible."""
    replicas = core._replicas
    errors = []
    for tp in req.partitions:
        view = replicas.get(tp)
        if view is not None:
            if req.delete_partitions:
                del replicas[tp]
            else:
                replicas[tp] = stopped(view)
            core._record("applied", f"{tp[0]}-{tp[1]}",
                         "deleted" if req.delete_partitions else "stopped")
        errors.append((tp, ErrorCode.NONE))
    errors.sort()
    return tuple(errors)
