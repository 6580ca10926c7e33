"""The world's adapters: it executes effects and turns ZooKeeper/channel input into events.

One function per action kind (``HANDLERS``), each returning one-line descriptions of what
happened. The cores' effects are carried out by the drivers the live shells run
(``fsm.driver``) over the world's ports (``controller_port``, ``broker_port``). Controller writes are committed as Kafka does: each op in its own ``multi``
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
  lost) deletes it as soon as it can (``release_controller``: after a fenced write, after a
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
    CheckOp,
)
from fsm.events import (
    BrokerCrashed,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    ControlledShutdown,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    RequestReceived,
    SessionStateChange,
    ShutdownRequested,
    Startup,
    TimerFired,
    WriteFailure,
    WriteResult,
)
from fsm.reads import marker_for, notified, survives_resignation
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
from model_check.world.broker_port import broker_driver_for
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
from model_check.world.controller_port import driver_for
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


# ================================================================ controller side


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


def release_controller(w: World, b: int, lines: list[str]) -> None:
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


def resign(w: World, b: int, lines: list[str]) -> None:
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
    release_controller(w, b, lines)


def _survives_resignation(item: object) -> bool:
    if isinstance(item, S.Marker):
        return survives_resignation(item)
    return isinstance(item, SessionStateChange | Startup)


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
    lines: list[str] = []
    if not driver_for(w, b, lines).process(item):
        return [f"c{b} skip {item.describe() if isinstance(item, S.Marker) else item}"]
    if isinstance(item, Startup):
        # Startup carries no epoch and elects nothing: what the event thread read from
        # /controller and /controller_epoch follows at once (contract "Election")
        w.enqueue(b, S.CONTROLLER_MARKER, front=True)
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
                           failures=() if r.ok else tuple(failures_of(w, write.ops, r)))
    failures: list[WriteFailure] = []
    for i, op in enumerate(write.ops):
        r = w.zk_call(ZK.multi, (CheckOp(P.CONTROLLER_EPOCH, write.fence_version), op),
                      pw.session)
        if r.ok:
            continue
        if r.results[0].code in (BAD_VERSION, NO_NODE):
            assert i == 0, "the fence moved in the middle of one commit"
            return WriteResult(write.token, fenced=True)
        failures += failures_of(w, (op,), MultiResult(False, r.results[1:], 0))
    return WriteResult(write.token, failures=tuple(failures))


def failures_of(w: World, ops: tuple[ZkOp, ...], r: MultiResult) -> list[WriteFailure]:
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
    lines: list[str] = []
    driver_for(w, b, lines, pw.write.token).write_done(result)
    if result.fenced:
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
        return lines
    bad = {f.path for f in result.failures}
    done = [_d(w).op(o) for o in pw.write.ops if o.path not in bad]
    line = f"c{b} commit #{pw.write.token}: " + ("; ".join(done) or "nothing")
    if result.failures:
        line += " | failed: " + "; ".join(f"{f.path} {f.code}" for f in result.failures)
    return [line, *lines]


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
    """Hand ``event`` to broker core ``b`` through its driver (``fsm.driver.BrokerDriver``);
    ``reply_to``/``request``: the controller and the request it answers (a delivery)."""
    lines: list[str] = []
    broker_driver_for(w, b, lines, reply_to, request).process((event,))
    if type(event) is ControlledShutdownAnswered and not w.procs[b].up:
        w.procs[b] = w.procs[b]._replace(shut_down=True)  # it stopped on the answer
    return lines


def register(w: World, b: int, lines: list[str]) -> object | None:
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


def process_gone(w: World, b: int) -> None:
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
        event = register(w, b, lines)
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
    process_gone(w, b)
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
    replica whose broker runs and acts as its follower for that partition.

    A leader takes a replica back only once that replica fetches from it: a broker that no
    longer hosts the partition (a reassignment moved it away) or follows another leader
    cannot catch up, so Kafka's leader never adds it. Without this, the world let a leader
    add a broker its own replica list no longer names (``check deep --random --seed 442``
    found an ISR outside the assignment that way)."""
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
                if r not in isr and procs[r].up and (tp, b) in w.broker_facts(r).follows:
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
