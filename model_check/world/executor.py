"""The world's adapters: it executes effects and turns ZooKeeper/channel input into events.

One function per action kind (``HANDLERS``), each returning one-line descriptions of what
happened. Controller writes are committed as Kafka does: each op in its own ``multi``
behind ``check(/controller_epoch, fence_version)`` (so partitions fail one by one); the
election's transaction (``fence_version`` None) is one ``multi``. A write whose session
expired between decision and commit commits nothing and is reported ``fenced`` (the real
client gets SessionExpired: the writer is no longer the controller either way).

ZooKeeper connection loss (``ZK_DISCONNECT``; the session lives on until ``RECONNECT`` or
an expiry), as the live adapters behave with kazoo:

* controller session (``adapters.controller.service``): kazoo's SUSPENDED queues
  ``SessionStateChange(CONNECTING)`` at the back of the event queue, and kazoo forgets every
  watcher and calls it with a NONE event: each queues its marker (``connection_lost``), so
  everything watched is read again -- and watched again -- once reconnected; nothing is
  notified meanwhile. Until the controller handles CONNECTING, the event thread goes on:
  events that need no read are handed (their writes then fail, below), a marker's read fails
  and the marker is held. Once it handled CONNECTING (``paused``) every event is held until
  it handled CONNECTED (queued by ``RECONNECT``), and held events are handed again in their
  order, in front of the rest. The world holds an event by leaving it in place in the queue:
  ``next_index`` is the one ``PROCESS`` takes.
* a write while the connection is lost is reported ``fenced`` (``adapters.zookeeper.writer``:
  kazoo fails the requests in flight with ConnectionLoss, outcome unknown): it reached the
  ensemble (``Action(COMMIT, b, APPLIED)``: applied, the answer lost) or not
  (``Action(COMMIT, b)``). A candidate that is not controller while its session still owns
  ``/controller`` (a resignation while disconnected, an election applied whose answer was
  lost) deletes it as soon as it can (``_release_controller``: after a fenced write, after a
  resignation, after CONNECTED), as the live service's ``_release_controller`` does (Kafka's
  controller move), so that an election follows.
* broker session (``adapters.broker.effects``): the broker core is not told (kazoo's
  SUSPENDED means nothing to it); its ZooKeeper writes (ISR changes and their notifications)
  fail with ``ConnectionLoss`` and commit nothing; its ControlledShutdown finds no
  controller (the read of ``/controller`` fails) and waits for its retry timer.
* an expiry of a disconnected session is the ensemble's other answer to the same fault
  (``EXPIRE_CONTROLLER``/``EXPIRE_BROKER``, free of their budget then): the client learns it
  when it reconnects -- CLOSED (the queue cleared) then a new session for the controller,
  ``SESSION_LOST`` for the broker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fsm import zk_paths as P
from fsm.broker_states import BrokerState
from fsm.controller.snapshot_fields import CONTROLLER
from fsm.effects import (
    BecameController,
    BrokerZkWrite,
    CancelTimer,
    CheckOp,
    Exit,
    LoadBrokerMetadata,
    LoadCluster,
    Register,
    RemoveBrokerChannel,
    ReplyControlledShutdown,
    Resigned,
    Respond,
    SendControlledShutdown,
    SendRequest,
    StartTimer,
    ZkWrite,
)
from fsm.events import (
    BrokerCrashed,
    BrokerRegistered,
    BrokerResponseReceived,
    BrokerSessionExpired,
    BrokerStarted,
    BrokerWriteResult,
    ClusterLoaded,
    ControlledShutdown,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    ReassignmentRequest,
    RequestReceived,
    SessionStateChange,
    ShutdownRequested,
    Startup,
    TimerFired,
    WriteFailure,
    WriteResult,
)
from fsm.reads import MARKERS, marker_for, notified, survives_resignation
from fsm.requests import StopReplicaRequest
from fsm.values import TopicAssignment
from fsm.zk_session_states import ZkClientState
from fsm.znodes import (
    BrokerRegistration,
    PreferredElectionZnode,
    ReassignmentZnode,
)
from model_check.world import actions as A
from model_check.world import describe as D
from model_check.world import reads as R
from model_check.world import state as S
from model_check.world.channels import (
    REQUEST,
    RESPONSE,
    SHUTDOWN,
    SHUTDOWN_REPLY,
    ChannelKey,
    Channels,
)
from model_check.world.config import (
    AddPartitions,
    AdminOp,
    ControlledShutdownOf,
    CreateTopic,
    DeleteTopic,
    PreferredElection,
    Reassign,
)
from model_check.world.cores import broker_config
from model_check.world.zookeeper import BAD_VERSION, EMPTY, NO_NODE, OK, MultiResult, Znode
from model_check.world.zookeeper import ZooKeeper as ZK

if TYPE_CHECKING:
    from fsm.effects import ZkOp
    from fsm.requests import ControllerRequest
    from model_check.world.world import World

def _d(w: World) -> object:
    """The describer for ``w``'s lines: ``describe``, or its quiet stand-in."""
    return D if w.describing else D.Quiet


MAX_ROUNDS = 64
"""Bound on synchronous follow-ups within one step (a loop here is a bug)."""


# ================================================================ controller side


def handle_controller(w: World, b: int, event: object) -> list[str]:
    """Hand ``event`` to controller ``b`` and execute its effects; synchronous answers
    (``ClusterLoaded``) are handed back at once, as the real event thread reads inline."""
    lines: list[str] = []
    work = [event]
    rounds = 0
    while work:
        rounds += 1
        assert rounds <= MAX_ROUNDS, f"controller {b}: more than {MAX_ROUNDS} rounds in one step"
        ev = work.pop(0)
        effects = w.controller_handle(b, ev)
        if w.describing:
            lines.append(f"c{b} handle {D.event(ev)}")
        if type(ev) in _MAY_ACCEPT_REASSIGNMENTS:
            _record_accepted(w, w.controllers[b])
        for eff in effects:
            follow = _controller_effect(w, b, eff, lines)
            if follow is not None:
                work.append(follow)
    return lines


_MAY_ACCEPT_REASSIGNMENTS = (ReassignmentRequest, ClusterLoaded)
"""The events with which a controller takes reassignments in flight (a request, a failover
resuming ``/admin/reassign_partitions``)."""


def _record_accepted(w: World, ctl: object) -> None:
    """Remember the reassignments the controller holds in flight (the world's record of what
    was *accepted*, as opposed to refused: a refused entry never enters the controller's
    in-flight set, it is only removed from ``/admin/reassign_partitions``)."""
    for tp, target in ctl.reassignments().items():  # type: ignore[attr-defined]
        if w.accepted.get(tp) != target:
            w.accepted[tp] = target


def next_index(w: World, b: int) -> int | None:
    """The position in controller ``b``'s queue of the event ``PROCESS`` takes (None: none
    can be taken now). Connected and not paused: the head. Paused (the controller handled
    CONNECTING): the first ``SessionStateChange``, every other event is held. Connection
    lost, not paused yet: the first event that needs no read (a marker's read fails: held)."""
    q = w.queues[b]
    if not q:
        return None
    paused = w.controller_snapshot(b)[CONTROLLER.session] == _CONNECTING
    if paused:
        for i, item in enumerate(q):
            if type(item) is SessionStateChange:
                return i
        return None
    if w.procs[b].controller_disconnected:
        for i, item in enumerate(q):
            if type(item) is not S.Marker:
                return i
        return None
    return 0


_CONNECTING = ZkClientState.CONNECTING.value


def _release_controller(w: World, b: int, lines: list[str]) -> None:
    """Delete ``/controller`` if candidate ``b``'s session owns it while ``b`` is not the
    controller (Kafka's controller move; the live service's ``_release_controller``): only
    while connected -- a disconnected client cannot; it tries again after CONNECTED."""
    proc = w.procs[b]
    if not proc.up or proc.controller_disconnected:
        return
    node = w.zk_call(ZK.get, P.CONTROLLER)
    if node is None or node.owner != proc.controller_session or w.controller_facts(b).active:
        return
    code = w.zk_call(ZK.delete, P.CONTROLLER, node.version)
    lines.append(f"c{b} delete its own /controller (not the controller): {code}")


def _controller_effect(w: World, b: int, eff: object, lines: list[str]) -> object | None:
    if isinstance(eff, ZkWrite):
        assert b not in w.writes, f"controller {b} decided a second write before a result"
        w.writes[b] = S.PendingWrite(eff, w.procs[b].controller_session)
        if w.describing:
            lines.append(f"c{b} decide write #{eff.token} fence={eff.fence_version}: "
                         + "; ".join(D.op(o) for o in eff.ops))
    elif isinstance(eff, SendRequest):
        _send_request(w, b, eff.broker_id, eff.request, lines)
    elif isinstance(eff, ReplyControlledShutdown):
        if w.procs[eff.broker_id].up:
            w.ch_send(ChannelKey(SHUTDOWN_REPLY, b, eff.broker_id),
                            (eff.correlation, eff.response))
            lines.append(f"c{b} reply ControlledShutdown -> b{eff.broker_id} "
                         f"{eff.response.error.name} remaining={len(eff.response.remaining)}")
        else:
            lines.append(f"c{b} reply ControlledShutdown -> b{eff.broker_id} lost (down)")
    elif isinstance(eff, LoadCluster):
        if w.controller_facts(b).awaiting_write or w.procs[b].controller_disconnected:
            # after the write's result; or the read fails: held, read again once CONNECTED
            w.enqueue(b, S.LOAD_MARKER, front=True)
            return None
        return w.zk_read(R.materialize, S.LOAD_MARKER, True, _NO_TOPICS,
                         w.procs[b].controller_session)
    elif isinstance(eff, StartTimer):
        w.timers.add((b, "c", eff.kind.value))
    elif isinstance(eff, CancelTimer):
        w.timers.discard((b, "c", eff.kind.value))
    elif isinstance(eff, BecameController):
        lines.append(f"c{b} became controller epoch={eff.epoch}")
    elif isinstance(eff, Resigned):
        lines.append(f"c{b} resigned: {eff.reason}")
        _resigned(w, b, lines)
    elif isinstance(eff, RemoveBrokerChannel):
        lost = w.ch_call(Channels.stop_sender, b, eff.broker_id)
        if lost:
            lines.append(f"c{b} remove channel to b{eff.broker_id} ({lost} queued requests "
                         f"dropped; the one in flight may still arrive)")
    else:
        raise TypeError(f"unknown controller effect {eff!r}")
    return None


def _send_request(w: World, c: int, target: int, req: ControllerRequest,
                  lines: list[str]) -> None:
    if not w.procs[target].up:
        lines.append(f"c{c} send -> b{target} lost (down): {_d(w).request(req)}")
        return
    w.ch_send(ChannelKey(REQUEST, c, target), (0, req))
    if w.describing:
        lines.append(f"c{c} send -> b{target} {D.request(req)}")


def _resigned(w: World, b: int, lines: list[str]) -> None:
    """A resigning controller unregisters its watchers, resets its channels to the brokers
    as the live channel manager's ``reset`` does (queued requests dropped, the one in flight
    to each broker may still arrive; responses and ControlledShutdowns on their way to it
    are lost), cancels its timers, forgets queued controller-only events and gives up
    ``/controller`` if its session still owns it."""
    cs = w.procs[b].controller_session
    if cs:
        w.zk_call(ZK.drop_watches, cs, (P.CONTROLLER,))
    w.ch_call(Channels.stop_sender, b, None)
    w.ch_call(Channels.drop, RESPONSE, None, b)
    w.ch_call(Channels.drop, SHUTDOWN, None, b)
    w.timers = {t for t in w.timers if not (t[0] == b and t[1] == "c")}
    w.queues[b] = tuple(e for e in w.queues[b] if _survives_resignation(e))
    _release_controller(w, b, lines)


def _survives_resignation(item: object) -> bool:
    if isinstance(item, S.Marker):
        return survives_resignation(item)
    return isinstance(item, SessionStateChange | Startup)


def materialize(w: World, b: int, item: object) -> object | None:
    """A queued item -> the event handed to the controller (None: nothing to hand): a marker
    is read by ``fsm.reads.materialize`` (the live service's reader) over the world's
    ZooKeeper."""
    if not isinstance(item, S.Marker):
        return item
    row = MARKERS[item.kind]
    active = not row.controller_only or w.controller_facts(b).active
    known = _NO_TOPICS
    if row.reads_topics and active:
        known = w.controllers[b].topic_names()  # type: ignore[attr-defined]
    return w.zk_read(R.materialize, item, active, known, w.procs[b].controller_session)


_NO_TOPICS: frozenset[str] = frozenset()


def do_process(w: World, a: A.Action) -> list[str]:
    b = a.broker
    q = w.queues[b]
    i = next_index(w, b)
    assert i is not None, f"controller {b} has no event it may take"
    item = q[i]
    w.queues[b] = q[1:] if i == 0 else q[:i] + q[i + 1:]
    if isinstance(item, Startup) and not w.procs[b].controller_disconnected:
        # the event thread reads /controller with a watch, then elects if nobody is there
        w.zk_call(ZK.get, P.CONTROLLER, w.procs[b].controller_session)
    event = materialize(w, b, item)
    if event is None:
        return [f"c{b} skip {item.describe() if isinstance(item, S.Marker) else item}"]
    lines = handle_controller(w, b, event)
    if isinstance(item, Startup):
        # Startup carries no epoch and elects nothing: what the event thread read from
        # /controller and /controller_epoch follows at once (contract "Election")
        w.enqueue(b, S.CONTROLLER_MARKER, front=True)
    elif type(item) is SessionStateChange and item.state is ZkClientState.CONNECTED:
        _release_controller(w, b, lines)
    return lines


def commit_lost(w: World, pw: S.PendingWrite, applied: bool) -> WriteResult:
    """``pw`` while its connection is lost: the answer is lost with it, reported fenced (the
    live writer's ConnectionLoss); the ops reached the ensemble (``applied``) or not."""
    if applied:
        commit(w, pw)
    return WriteResult(pw.write.token, fenced=True)


def commit(w: World, pw: S.PendingWrite) -> WriteResult:
    write = pw.write
    if not w._alive(pw.session):
        return WriteResult(write.token, fenced=True)
    if write.fence_version is None:
        r = w.zk_call(ZK.multi, write.ops, pw.session)
        return WriteResult(write.token,
                           failures=() if r.ok else tuple(_failures(w, write.ops, r)))
    failures: list[WriteFailure] = []
    for i, op in enumerate(write.ops):
        r = w.zk_call(ZK.multi, (CheckOp(P.CONTROLLER_EPOCH, write.fence_version), op),
                      pw.session)
        if r.ok:
            continue
        if r.results[0].code in (BAD_VERSION, NO_NODE):
            assert i == 0, "the fence moved in the middle of one commit"
            return WriteResult(write.token, fenced=True)
        failures += _failures(w, (op,), MultiResult(False, r.results[1:], 0))
    return WriteResult(write.token, failures=tuple(failures))


def _failures(w: World, ops: tuple[ZkOp, ...], r: MultiResult) -> list[WriteFailure]:
    out = []
    for op, res in zip(ops, r.results, strict=True):
        if res.code == OK:
            continue
        node = w.zk.get(op.path)
        out.append(WriteFailure(op.path, res.code, None if node is None else node.data,
                                -1 if node is None else node.version))
    return out


def do_commit(w: World, a: A.Action) -> list[str]:
    b = a.broker
    pw = w.writes.pop(b)
    proc = w.procs[b]
    connected = not (proc.controller_disconnected and pw.session == proc.controller_session)
    result = commit(w, pw) if connected else commit_lost(w, pw, a.arg == A.APPLIED)
    if result.fenced:
        lines = handle_controller(w, b, result)
        _release_controller(w, b, lines)
        if connected:
            line = f"c{b} commit #{pw.write.token} FENCED (nothing written)"
        elif a.arg == A.APPLIED:
            line = (f"c{b} commit #{pw.write.token} in flight when the connection was lost: "
                    f"applied, answer lost (reported fenced)")
        else:
            line = (f"c{b} commit #{pw.write.token} FENCED (connection lost: nothing "
                    f"written)")
        return [line, *lines]
    if not w.describing:
        return handle_controller(w, b, result)
    bad = {f.path for f in result.failures}
    done = [_d(w).op(o) for o in pw.write.ops if o.path not in bad]
    line = f"c{b} commit #{pw.write.token}: " + ("; ".join(done) or "nothing")
    if result.failures:
        line += " | failed: " + "; ".join(f"{f.path} {f.code}" for f in result.failures)
    return [line, *handle_controller(w, b, result)]


def do_zk_disconnect(w: World, a: A.Action) -> list[str]:
    b = a.broker
    proc = w.procs[b]
    if a.arg == A.BROKER_SESSION:
        w.procs[b] = proc._replace(broker_disconnected=True)
        if not proc.up:
            return [f"b{b} cannot reach ZooKeeper (down: its next start waits to connect)"]
        return [f"b{b} ZooKeeper connection LOST (session alive; the broker core is not "
                f"told): its writes fail with ConnectionLoss"]
    w.procs[b] = proc._replace(controller_disconnected=True)
    w.enqueue(b, _CONNECTING_EVENT)
    paths = w.zk_call(ZK.connection_lost, proc.controller_session)
    markers = [m for m in (marker_for(p) for p in paths) if m is not None]
    for m in markers:
        w.enqueue(b, m)
    fired = ", ".join(m.describe() for m in markers) or "none"
    return [f"c{b} ZooKeeper connection LOST (session alive): queue "
            f"SessionStateChange(CONNECTING); every watcher called (NONE): queue {fired}"]


_CONNECTING_EVENT = SessionStateChange(ZkClientState.CONNECTING)
_CONNECTED_EVENT = SessionStateChange(ZkClientState.CONNECTED)


def do_reconnect(w: World, a: A.Action) -> list[str]:
    b = a.broker
    proc = w.procs[b]
    if a.arg == A.BROKER_SESSION:
        w.procs[b] = proc._replace(broker_disconnected=False)
        return [f"b{b} ZooKeeper connection re-established (same session)"]
    w.procs[b] = proc._replace(controller_disconnected=False)
    w.enqueue(b, _CONNECTED_EVENT)
    return [f"c{b} ZooKeeper connection re-established (same session): queue "
            f"SessionStateChange(CONNECTED)"]


def do_notify(w: World, a: A.Action) -> list[str]:
    b = a.broker
    n = w.zk_call(ZK.pop_notification, w.procs[b].controller_session)
    marker = notified(n.path, n.kind)
    if marker is None:
        return [f"c{b} watch {n.kind} {n.path} (ignored)"]
    w.enqueue(b, marker)
    return [f"c{b} watch {n.kind} {n.path} -> queue {marker.describe()}"]


# ================================================================ broker side


def handle_broker(w: World, b: int, event: object, reply_to: int | None = None,
                  request: ControllerRequest | None = None) -> list[str]:
    lines: list[str] = []
    work = [event]
    rounds = 0
    while work:
        rounds += 1
        assert rounds <= MAX_ROUNDS, f"broker {b}: more than {MAX_ROUNDS} rounds in one step"
        ev = work.pop(0)
        effects, before, after = w.broker_handle(b, ev)
        if w.describing:
            moved = f" [{before.value} -> {after.value}]" if before is not after else ""
            lines.append(f"b{b} handle {D.event(ev)}{moved}")
        for eff in effects:
            follow = _broker_effect(w, b, eff, lines, reply_to, request)
            if follow is not None:
                work.append(follow)
    if type(event) is ControlledShutdownAnswered and not w.procs[b].up:
        w.procs[b] = w.procs[b]._replace(shut_down=True)  # it stopped on the answer
    return lines


def _broker_effect(w: World, b: int, eff: object, lines: list[str], reply_to: int | None,
                   request: ControllerRequest | None) -> object | None:
    if isinstance(eff, Respond):
        assert reply_to is not None and request is not None, "Respond without a request"
        delete = request.delete_partitions if isinstance(request, StopReplicaRequest) else None
        resp = BrokerResponseReceived(b, request.broker_epoch, request.api, eff.response, delete)
        if w.procs[reply_to].up:  # the request rides along: a lost answer means a resend
            w.ch_send(ChannelKey(RESPONSE, b, reply_to), (request, resp))
        if w.describing:
            lines.append(f"b{b} respond -> c{reply_to} {request.api} {eff.response.error.name}")
    elif isinstance(eff, BrokerZkWrite):
        failures: list[WriteFailure] = []
        if w.procs[b].broker_disconnected:  # adapters.broker.effects: nothing committed
            for op in eff.ops:
                failures.append(WriteFailure(op.path, "ConnectionLoss"))
                lines.append(f"b{b} zk {_d(w).op(op)} FAILED ConnectionLoss (connection lost)")
            return BrokerWriteResult(eff.token, tuple(failures))
        for op in eff.ops:
            r = w.zk_call(ZK.multi, (op,))
            if r.ok:
                created = r.results[0].path
                lines.append(f"b{b} zk {_d(w).op(op) if created == op.path else 'create ' + created}")
            else:
                failures += _failures(w, (op,), r)
                lines.append(f"b{b} zk {_d(w).op(op)} FAILED {r.results[0].code}")
        return BrokerWriteResult(eff.token, tuple(failures))
    elif isinstance(eff, SendControlledShutdown):
        if w.procs[b].broker_disconnected:  # the read of /controller fails
            lines.append(f"b{b} ControlledShutdown lost: ZooKeeper connection lost")
            return None
        c = w.zk_read(R.active_controller)
        if c is None or not w.procs[c].up:
            lines.append(f"b{b} ControlledShutdown lost: no controller")
        else:
            # the correlation is the request's broker epoch: it comes back with the answer
            w.ch_send(ChannelKey(SHUTDOWN, b, c), (eff.request.broker_epoch, eff.request))
            lines.append(f"b{b} send ControlledShutdown(be={eff.request.broker_epoch}) -> c{c}")
    elif isinstance(eff, Register | LoadBrokerMetadata):
        proc = w.procs[b]
        if proc.broker_disconnected or proc.broker_io:  # done later, by a broker-io step
            io = "register" if isinstance(eff, Register) else "load"
            w.procs[b] = proc._replace(broker_io=io)
            lines.append(f"b{b} {io} deferred: " + ("ZooKeeper connection lost"
                                                     if proc.broker_disconnected
                                                     else "one ZooKeeper call per step"))
            return None
        if isinstance(eff, Register):
            return _register(w, b, lines)
        return w.zk_read(R.broker_metadata)
    elif isinstance(eff, StartTimer):
        w.timers.add((b, "b", eff.kind.value))
    elif isinstance(eff, CancelTimer):
        w.timers.discard((b, "b", eff.kind.value))
    elif isinstance(eff, Exit):
        lines.append(f"b{b} exit")
        _process_gone(w, b)
        return BrokerCrashed()
    else:
        raise TypeError(f"unknown broker effect {eff!r}")
    return None


def _register(w: World, b: int, lines: list[str]) -> object | None:
    proc = w.procs[b]
    if not w._alive(proc.broker_session):
        proc = proc._replace(broker_session=w.zk_call(ZK.open_session))
        w.procs[b] = proc
    cfg = broker_config(w.config, b)
    r = w.zk_call(ZK.create, P.broker(b), BrokerRegistration(b, cfg.endpoints, cfg.rack),
                  session=proc.broker_session, ephemeral=True)
    if r.code != OK:
        lines.append(f"b{b} register FAILED {r.code}")
        return None
    epoch = w.zk_call(ZK.get, P.broker(b)).czxid
    lines.append(f"b{b} register /brokers/ids/{b} epoch={epoch}")
    return BrokerRegistered(epoch)


def _process_gone(w: World, b: int) -> None:
    """The process stopped (exit or kill -9): sessions close, its connections reset, the
    memory of its controller candidate is lost. Requests a controller queued for it stay
    queued (Kafka's channel manager keeps a queue per broker id until the controller handles
    the BrokerChange): they reach the next incarnation unless removed first -- the reason
    requests carry the broker epoch (seed 000, KIP-380)."""
    proc = w.procs[b]
    sessions = tuple(s for s in (proc.broker_session, proc.controller_session) if s)
    if sessions:  # one ZooKeeper call: one memo lookup (``StepMemo.zk_call``) for both
        w.zk_call(ZK.expire_sessions, sessions)
    w.ch_call(Channels.process_gone, b)
    w.writes.pop(b, None)
    w.timers = {t for t in w.timers if t[0] != b}
    w.queues[b] = ()
    w.reset_controller(b)
    w.procs[b] = S.Proc(up=False, started=True)


def do_deliver(w: World, a: A.Action) -> list[str]:
    key: ChannelKey = a.arg  # type: ignore[assignment]
    msg = w.ch_call(Channels.pop, key)
    if key.kind == REQUEST:
        corr, req = msg  # type: ignore[misc]
        return handle_broker(w, key.dst, RequestReceived(req, corr), key.src, req)
    if key.kind == RESPONSE:
        _request, answer = msg  # type: ignore[misc]
        w.enqueue(key.dst, answer)
        return [f"c{key.dst} queue {_d(w).event(answer)}"]
    if key.kind == SHUTDOWN:
        corr, req = msg  # type: ignore[misc]
        ev = ControlledShutdown(req, corr)
        w.enqueue(key.dst, ev)
        return [f"c{key.dst} queue {_d(w).event(ev)}"]
    if key.kind == SHUTDOWN_REPLY:
        epoch, resp = msg  # type: ignore[misc]
        return handle_broker(w, key.dst, ControlledShutdownAnswered(resp, epoch))
    raise ValueError(key)


# ================================================================ lifecycle and faults


def do_start(w: World, a: A.Action) -> list[str]:
    """A process starts; if its broker cannot reach ZooKeeper (``zk-disconnect`` while it
    was down), its broker session opens once it reconnects and its metadata read waits."""
    b = a.broker
    cut = w.procs[b].broker_disconnected
    w.procs[b] = S.Proc(up=True, started=True,
                        broker_session=0 if cut else w.zk_call(ZK.open_session),
                        controller_session=w.zk_call(ZK.open_session),
                        broker_disconnected=cut)
    w.reset_controller(b)
    w.queues[b] = (Startup(),)
    return [f"b{b} process starts" + (" (ZooKeeper unreachable)" if cut else ""),
            *handle_broker(w, b, BrokerStarted())]


_BUSY = "-"
"""``Proc.broker_io`` while a ``broker-io`` step runs: a read or registration the step's
event leads to is deferred again (one ZooKeeper call per step)."""


def do_broker_io(w: World, a: A.Action) -> list[str]:
    """The broker's deferred read or registration, now that its connection is back."""
    b = a.broker
    proc = w.procs[b]
    io = proc.broker_io
    w.procs[b] = proc._replace(broker_io=_BUSY)
    lines: list[str] = []
    if io == "register":
        event = _register(w, b, lines)
    else:
        event = w.zk_read(R.broker_metadata)
        lines.append(f"b{b} read the cluster metadata")
    if event is not None:
        lines += handle_broker(w, b, event)
    if w.procs[b].broker_io == _BUSY:
        w.procs[b] = w.procs[b]._replace(broker_io="")
    return lines


def do_crash(w: World, a: A.Action) -> list[str]:
    b = a.broker
    _process_gone(w, b)
    return [f"b{b} CRASH", *handle_broker(w, b, BrokerCrashed())]


def do_expire_broker(w: World, a: A.Action) -> list[str]:
    b = a.broker
    proc = w.procs[b]
    deleted = w.zk_call(ZK.expire_session, proc.broker_session)
    w.procs[b] = proc._replace(broker_session=0, session_lost=True, broker_disconnected=False)
    how = " while disconnected" if proc.broker_disconnected else ""
    return [f"b{b} broker session EXPIRED{how} (deleted {', '.join(deleted) or 'nothing'}); "
            f"the broker has not noticed yet"]


def do_session_lost(w: World, a: A.Action) -> list[str]:
    b = a.broker
    w.procs[b] = w.procs[b]._replace(session_lost=False)
    return handle_broker(w, b, BrokerSessionExpired())


def do_expire_controller(w: World, a: A.Action) -> list[str]:
    """The candidate's session expires; the client learns it (CLOSED: Kafka clears the event
    queue and puts the expiry first), opens a new session and starts again."""
    b = a.broker
    proc = w.procs[b]
    deleted = w.zk_call(ZK.expire_session, proc.controller_session)
    w.procs[b] = proc._replace(controller_session=w.zk_call(ZK.open_session),
                               controller_disconnected=False)
    w.queues[b] = (SessionStateChange(ZkClientState.CLOSED), Startup())
    how = " while disconnected" if proc.controller_disconnected else ""
    return [f"c{b} controller session EXPIRED{how} (deleted "
            f"{', '.join(deleted) or 'nothing'})"]


def do_drop(w: World, a: A.Action) -> list[str]:
    lost = w.ch_call(Channels.drop_connection, a.broker, a.arg)
    return [f"connection {a.broker}<->{a.arg} DROPPED: {lost} in flight lost (an answer's "
            f"request is sent again; a ControlledShutdown is retried); queued requests kept"]


def do_timer(w: World, a: A.Action) -> list[str]:
    b = a.broker
    role, kind = a.arg  # type: ignore[misc]
    w.timers.discard((b, role, kind.value))
    if role == "c":
        w.enqueue(b, TimerFired(kind))
        return [f"c{b} timer {kind.value} fired -> queue"]
    return handle_broker(w, b, TimerFired(kind))


def do_isr_change(w: World, a: A.Action) -> list[str]:
    tp, isr = a.arg  # type: ignore[misc]
    return handle_broker(w, a.broker, IsrChangeWanted(tp, isr))


def isr_change_choices(w: World) -> list[A.Action]:
    """For every acting leader: shrink its ISR by one follower, or expand it by one assigned
    replica whose process runs."""
    out: list[A.Action] = []
    procs = w.procs
    for b in w.config.broker_ids:
        if not procs[b].up:
            continue
        facts = w.broker_facts(b)
        if facts.state is not BrokerState.RUNNING:
            continue
        for tp, isr, replicas in facts.led:
            for f in isr:
                if f != b:
                    out.append(A.Action(A.ISR_CHANGE, b, (tp, tuple(x for x in isr if x != f))))
            for r in replicas:
                if r not in isr and procs[r].up:
                    out.append(A.Action(A.ISR_CHANGE, b, (tp, isr + (r,))))
    return out


# ================================================================ admin


_SIGTERM_STATES = frozenset({BrokerState.STARTING, BrokerState.RECOVERY, BrokerState.RUNNING})
_STOP_STATES = _SIGTERM_STATES | {BrokerState.PENDING_CONTROLLED_SHUTDOWN}


def admin_enabled(w: World, op: AdminOp) -> bool:
    """A signal reaches a running process whatever its state: a controlled shutdown's SIGTERM
    while it starts, recovers or runs; the stopping one also during its controlled
    shutdown."""
    if isinstance(op, ControlledShutdownOf):
        return w.procs[op.broker].up and w.broker_facts(op.broker).state in (
            _SIGTERM_STATES if op.controlled else _STOP_STATES)
    return True


def do_admin(w: World, a: A.Action) -> list[str]:
    i: int = a.arg  # type: ignore[assignment]
    op = w.config.admin[i]
    w.admin_done.add(i)
    if isinstance(op, ControlledShutdownOf):
        return [f"admin {op.describe()} ({'SIGTERM' if op.controlled else 'SIGTERM again'})",
                *handle_broker(w, op.broker, ShutdownRequested(op.controlled))]
    return [f"admin {op.describe()}: {run_admin(w, op)}"]


def run_admin(w: World, op: AdminOp) -> str:
    """Write ``op`` into ZooKeeper as Kafka's tools do; returns what happened."""
    zk = w.zk_call
    if isinstance(op, CreateTopic):
        r = zk(ZK.create, P.topic(op.topic), TopicAssignment(op.assignment))
        if r.code == OK:  # a new topic: moves accepted for an earlier one of that name are moot
            for tp in [tp for tp in w.accepted if tp[0] == op.topic]:
                del w.accepted[tp]
        return f"create {P.topic(op.topic)} {r.code}"
    if isinstance(op, DeleteTopic):
        if zk(ZK.get, P.topic(op.topic)) is None:
            return "unknown topic (tool refuses)"
        r = zk(ZK.create, P.delete_topic(op.topic), EMPTY)
        return f"create {P.delete_topic(op.topic)} {r.code}"
    if isinstance(op, AddPartitions):
        node = zk(ZK.get, P.topic(op.topic))
        if node is None:
            return "unknown topic (tool refuses)"
        merged = dict(node.data.partitions)
        merged.update(dict(op.added))
        new = TopicAssignment(tuple(sorted(merged.items())), node.data.adding,
                              node.data.removing)
        code = zk(ZK.set_data, P.topic(op.topic), new, node.version)
        return f"set {P.topic(op.topic)} {code}"
    if isinstance(op, Reassign):
        refused = reassign_refusal(lambda path: zk(ZK.get, path), op)
        if refused is not None:
            return f"{refused} (tool refuses)"
        r = zk(ZK.create, P.REASSIGN_PARTITIONS, ReassignmentZnode(op.targets))
        return f"create {P.REASSIGN_PARTITIONS} {r.code}"
    if isinstance(op, PreferredElection):
        r = zk(ZK.create, P.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(op.partitions))
        return f"create {P.PREFERRED_REPLICA_ELECTION} {r.code}"
    raise TypeError(op)


def reassign_refusal(get: Callable[[str], Znode | None], op: Reassign) -> str | None:
    """What ``kafka-reassign-partitions --execute`` refuses before writing anything: a
    partition of a topic that does not exist, or beyond its partitions (``get``: a znode
    by path). Target brokers are the controller's to judge (it refuses a target naming a
    broker that is not live, and a topic queued for deletion)."""
    for (topic, p), _target in op.targets:
        node = get(P.topic(topic))
        if node is None or not isinstance(node.data, TopicAssignment):
            return f"unknown topic {topic}"
        if p not in dict(node.data.partitions):
            return f"unknown partition {topic}-{p}"
    return None


def do_restart(w: World, a: A.Action) -> list[str]:
    return do_start(w, a)


HANDLERS = {
    A.COMMIT: do_commit,
    A.PROCESS: do_process,
    A.NOTIFY: do_notify,
    A.DELIVER: do_deliver,
    A.SESSION_LOST: do_session_lost,
    A.START: do_start,
    A.TIMER: do_timer,
    A.CRASH: do_crash,
    A.RESTART: do_restart,
    A.EXPIRE_BROKER: do_expire_broker,
    A.EXPIRE_CONTROLLER: do_expire_controller,
    A.DROP: do_drop,
    A.ZK_DISCONNECT: do_zk_disconnect,
    A.BROKER_IO: do_broker_io,
    A.RECONNECT: do_reconnect,
    A.ISR_CHANGE: do_isr_change,
    A.ADMIN: do_admin,
}
