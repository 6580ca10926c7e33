"""Symmetry reduction over broker ids, and canonical names for ZooKeeper's opaque tokens.

Two worlds that differ only by a renaming of brokers behave alike, step for step, when the
renaming moves no broker the scenario still names (a pending reassignment to brokers 3,1,
a pending controlled shutdown of broker 2, a topic still to be created on 1,2): those are
*fixed*, the others *free*. ``canonical(snapshot, config)`` maps every world to the same
64-bit key as all its renamings over the free brokers, so the search explores one world
per class. The world explored is always a real one -- the first of its class found -- so
counterexamples stay real action sequences and replay unchanged.

A renaming ``relabel(snapshot, config, perm)`` rewrites every broker id the world holds:
znode paths (``/brokers/ids/<id>``) and data, channel keys and messages, controller and
broker memory, queued events, pending writes, timers and the world's own records. Sets
kept sorted by broker id are sorted again. The same pass gives ZooKeeper's *tokens*
canonical names: session ids (numbered by the broker and role that holds them; a dead one
becomes 0) and zxids (named after the znode they created, or their order among the epochs
of registrations that are gone: the core only compares them for equality -- a broker epoch
is a registration's czxid), and drops what nobody reads
(``mzxid``, the zxid and session counters, whose next values are fresh either way). So two
worlds also meet when they differ only in how many transactions came before -- a failed
write, an ISR notification created and deleted -- which is a reduction of its own, even
with no free broker (a third of ``standard``'s states at depth 7).

Candidate renamings are pruned by a broker *signature* (what a broker looks like
independently of its id: its process flags, lifecycle state, roles, positions in the
replica lists...): free brokers are sorted by signature and only ties are permuted, and
the key is the smallest fingerprint among the candidates. Soundness rests on the core
treating broker ids symmetrically (it orders by id only sets it then sorts); the unit
tests check that relabelling commutes with every step on sampled worlds.

Everything here reads the layouts of the world's and the cores' snapshots, field by field
by the names their producers give them (``world_layout``, ``RestSnapshotFields``,
``ZooKeeperSnapshotFields``, ``fsm.controller.snapshot_fields``,
``fsm.broker.snapshot_codec``; ``fsm.snapshot_fields``): a renaming copies a component and
replaces the fields that hold broker ids or tokens, so a field it has no rule for is copied
as it is only where the layout says it holds neither. A value of a kind it has no rule for
raises ``SymmetryError`` rather than being copied unrenamed.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Iterable
from itertools import permutations, product
from typing import TYPE_CHECKING, Any, NamedTuple

from fsm import events as E
from fsm import requests as Q
from fsm import values as V
from fsm import znodes as Z
from fsm.broker.snapshot_codec import (
    APPLIED,
    BROKER,
    CACHE,
    METADATA_PARTITION,
    PENDING,
    REPLICA,
    ZK_SEEN,
)
from fsm.controller.records import SHUTDOWN
from fsm.controller.snapshot_fields import (
    CONTEXT,
    CONTROLLER,
    DECISION,
    FOLLOWUP_FIELDS,
    OWED,
    PARTITION_STATE,
    ROUND,
)
from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkWrite
from fsm.errors import ErrorCode
from fsm.snapshot_fields import BROKER_INFO
from fsm.zk_paths import BROKER_IDS
from fsm.zk_session_states import ZkClientState
from model_check.world import state as S
from model_check.world.channels import RESPONSE, ChannelKey
from model_check.world.codec import FROZENSET, decode, tag_of, tagged_positions
from model_check.world.config import (
    AddPartitions,
    ControlledShutdownOf,
    CreateTopic,
    Reassign,
    WorldConfig,
)
from model_check.world.fingerprint import fingerprint
from model_check.world.world import PROC, REST, TIMER, world_layout
from model_check.world.zookeeper import NOTIFICATION, ZNODE, ZOOKEEPER, Notification

if TYPE_CHECKING:
    from model_check.memo.renames import RenameMemo

MAX_CANDIDATES = 120
"""More candidate renamings than this (large tie groups): the world keeps its own key."""


class SymmetryError(ValueError):
    """A snapshot holds a value the relabelling has no rule for."""


# ---------------------------------------------------------------- which brokers are free


def named_brokers(config: WorldConfig, done: Iterable[int]) -> frozenset[int]:
    """Brokers named by an admin action not yet performed (they are not interchangeable)."""
    done = set(done)
    out: set[int] = set()
    for i, op in enumerate(config.admin):
        if i in done:
            continue
        if isinstance(op, CreateTopic):
            out.update(b for _, r in op.assignment for b in r)
        elif isinstance(op, AddPartitions):
            out.update(b for _, r in op.added for b in r)
        elif isinstance(op, Reassign):
            out.update(b for _, r in op.targets for b in r)
        elif isinstance(op, ControlledShutdownOf):
            out.add(op.broker)
    return frozenset(out)


# ---------------------------------------------------------------- field rules

ID, IDS, ZXID, SESSION, PATH, PART_IDS, INFOS = range(7)

_RULES_BY_CLASS: dict[type, dict[str, int]] = {
    V.LeaderAndIsr: {"leader": ID, "isr": IDS},
    V.TopicAssignment: {"partitions": PART_IDS, "adding": PART_IDS, "removing": PART_IDS},
    V.BrokerInfo: {"broker_id": ID, "epoch": ZXID},
    Z.ReassignmentZnode: {"partitions": PART_IDS},
    Z.ControllerZnode: {"broker_id": ID},
    Z.BrokerRegistration: {"broker_id": ID},
    Q.LeaderAndIsrPartition: {"leader": ID, "isr": IDS, "replicas": IDS},
    Q.LeaderAndIsrRequest: {"controller_id": ID, "broker_epoch": ZXID, "live_leaders": INFOS},
    Q.UpdateMetadataPartition: {"leader": ID, "isr": IDS, "replicas": IDS,
                                "offline_replicas": IDS},
    Q.UpdateMetadataRequest: {"controller_id": ID, "broker_epoch": ZXID,
                              "live_brokers": INFOS},
    Q.StopReplicaRequest: {"controller_id": ID, "broker_epoch": ZXID},
    Q.ControlledShutdownRequest: {"broker_id": ID, "broker_epoch": ZXID},
    E.BrokerResponseReceived: {"broker_id": ID, "broker_epoch": ZXID},
    E.ControlledShutdown: {"correlation": ZXID},
    E.ControllerChange: {"active": ID},
    E.BrokerChange: {"live": INFOS},
    E.ReassignmentRequest: {"targets": PART_IDS},
    ChannelKey: {"src": ID, "dst": ID},
    Notification: {"session": SESSION, "path": PATH},
    S.PendingWrite: {"session": SESSION},
    CreateOp: {"path": PATH},
    SetDataOp: {"path": PATH},
    DeleteOp: {"path": PATH},
    CheckOp: {"path": PATH},
}
_NO_BROKER_IDS: tuple[type, ...] = (
    ZkWrite, Z.ControllerEpochZnode, Z.EmptyZnode, Z.PreferredElectionZnode,
    Z.IsrChangeZnode, Q.ControllerResponse, Q.ControlledShutdownResponse, ErrorCode,
    E.Startup, E.SessionStateChange, E.TimerFired, E.TimerKind, ZkClientState, S.Marker,
    E.TopicDeletionRequest, E.PreferredElectionRequest,
)
"""Tagged classes whose fields hold no broker id, session or zxid of their own (their
nested values are still walked)."""

_TOKEN_FREE_CLASSES: tuple[type, ...] = (
    V.LeaderAndIsr, V.TopicAssignment, Z.ReassignmentZnode, Z.ControllerZnode,
    Z.BrokerRegistration, Z.ControllerEpochZnode, Z.EmptyZnode, Z.PreferredElectionZnode,
    Z.IsrChangeZnode, Q.LeaderAndIsrPartition, Q.UpdateMetadataPartition,
    Q.ControllerResponse, Q.ControlledShutdownResponse, ErrorCode, E.TimerKind, ZkClientState,
    E.Startup, E.SessionStateChange, E.TimerFired, S.Marker, ChannelKey,
    E.TopicDeletionRequest, E.PreferredElectionRequest, E.ReassignmentRequest,
    E.ControllerChange, CreateOp, SetDataOp, DeleteOp, CheckOp, ZkWrite,
)
"""Classes whose values (nested ones included) hold broker ids at most, no session or zxid."""


_ROUND_DATA_RULES: dict[str, tuple[int | None, ...]] = {
    cls.__name__: tuple(_RULES_BY_CLASS.get(cls, {}).get(f.name)
                        for f in dataclasses.fields(cls))
    for cls in (V.LeaderAndIsr, V.TopicAssignment, Z.ReassignmentZnode, Z.ControllerZnode,
                Z.ControllerEpochZnode)}
"""The data of a round's op, ``(class name, *fields)`` (``fsm.controller.records``): the
rule of each field, None for none (the field is copied as it is)."""


def _op_positions(cls: type) -> tuple[int, int | None]:
    names = [f.name for f in dataclasses.fields(cls)]
    return 1 + names.index("path"), (1 + names.index("data") if "data" in names else None)


_ROUND_OPS: dict[str, tuple[int, int | None]] = {
    cls.__name__: _op_positions(cls) for cls in (CreateOp, SetDataOp, DeleteOp, CheckOp)}
"""A round's op, ``(class name, *fields)``: the positions of its path and of its data (None:
it has none)."""

_FOLLOWUP_RULES: dict[str, tuple[int | None, ...]] = {
    kind: tuple({"broker": ID, "correlation": ZXID, "replicas": IDS}.get(name)
                for name in names)
    for kind, names in FOLLOWUP_FIELDS.items()}
"""A round's followup by kind: the rule of each field (the ControlledShutdown's correlation
is the broker epoch, a zxid)."""

CHANNEL_KEY = tagged_positions(ChannelKey)


class _Tables(NamedTuple):
    """The rules by the codec's tags (``_tables``)."""

    rules: dict[str, tuple[int | None, ...]]  # a tagged value's rule of each field
    token_free: frozenset[str]  # the tags of ``_TOKEN_FREE_CLASSES``
    info_id: int  # the position of ``broker_id`` in an encoded ``BrokerInfo``


@functools.cache
def _tables() -> _Tables:
    """The rules by tag, worked out once from the codec's registry."""
    rules: dict[str, tuple[int | None, ...]] = {}
    for cls, by_field in _RULES_BY_CLASS.items():
        tag, fields = tag_of(cls)
        rules[tag] = tuple(by_field.get(f) for f in fields)
    for cls in _NO_BROKER_IDS:
        tag, fields = tag_of(cls)
        rules[tag] = (None,) * (1 if issubclass(cls, enum.Enum) else len(fields))
    return _Tables(rules, frozenset(tag_of(cls)[0] for cls in _TOKEN_FREE_CLASSES),
                   1 + tag_of(V.BrokerInfo)[1].index("broker_id"))


# ---------------------------------------------------------------- the renaming pass


class _Renaming:
    """One pass over a component: broker ids by ``perm``; tokens by the maps ``sessions``
    and ``zxids`` (None: tokens keep their values -- a runnable world). ``collect``: keep
    every token met (in ``seen_zxids``/``seen_sessions``) and leave it as it is. ``memo``:
    the search's (``RenameMemo``), for the renamings of token-free values."""

    def __init__(self, perm: dict[int, int], sessions: dict[int, int] | None = None,
                 zxids: dict[int, int] | None = None, collect: bool = False,
                 memo: RenameMemo | None = None) -> None:
        self.perm = perm
        self.sessions = sessions
        self.zxids = zxids
        self.collect = collect
        self.seen_zxids: set[int] = set()
        self.seen_sessions: set[int] = set()
        self.rules, self.token_free, self.info_id = _tables()
        self.free = None if memo is None else memo.free
        self.identity = all(k == v for k, v in perm.items())
        self.pkey = tuple(sorted(perm.items()))

    # scalars -------------------------------------------------------

    def id(self, b: object) -> object:
        return self.perm.get(b, b) if type(b) is int else b  # -1, -2, None stay

    def ids(self, bs: tuple) -> tuple:
        perm = self.perm
        return tuple([perm.get(b, b) for b in bs])

    def zxid(self, z: object) -> object:
        if type(z) is not int or z <= 0:
            return z
        if self.collect:
            self.seen_zxids.add(z)
            return z
        zxids = self.zxids
        return z if zxids is None else zxids[z]

    def session(self, s: object) -> object:
        if type(s) is not int or not s:
            return s
        if self.collect:
            self.seen_sessions.add(s)
            return s
        sessions = self.sessions
        return s if sessions is None else sessions.get(s, 0)

    def path(self, p: str) -> str:
        prefix = BROKER_IDS + "/"
        if p.startswith(prefix) and p[len(prefix):].isdigit():
            return prefix + str(self.id(int(p[len(prefix):])))
        return p

    def part_ids(self, pairs: tuple) -> tuple:
        return tuple([(k, self.ids(r)) for k, r in pairs])

    def infos(self, infos: tuple) -> tuple:
        at = self.info_id  # encoded BrokerInfos: sorted by id, then walked
        order = sorted(infos, key=lambda e: self.id(e[at]))
        return tuple([self.value(e) for e in order])

    # values --------------------------------------------------------

    def value(self, x: object) -> object:
        """A builtins-only encoded value: tagged tuples by their rules, plain tuples
        element by element, scalars as they are. A value of a token-free class is left as
        it is when no broker moves (or tokens are only collected), else memoised."""
        if type(x) is not tuple:
            return x
        head = x[0] if x else None
        if type(head) is str and head[:1] == "\x00":
            if head in self.token_free:
                if self.collect or self.identity:
                    return x
                free = self.free
                if free is None:
                    return self.tagged(x)
                hit = free.get(x, self.pkey)
                return free.put(x, self.pkey, self.tagged(x)) if hit is None else hit
            return self.tagged(x)
        return tuple([self.value(y) for y in x])

    def tagged(self, x: tuple) -> tuple:
        rules = self.rules.get(x[0])
        if rules is None:
            if x[0] == FROZENSET:
                return (FROZENSET, *sorted([self.value(y) for y in x[1:]]))
            raise SymmetryError(f"no relabelling rule for {x[0][1:]!r}")
        out = [x[0]]
        for rule, f in zip(rules, x[1:], strict=True):
            out.append(self.field(rule, f))
        return tuple(out)

    def field(self, rule: int | None, f: object) -> object:
        if rule is None:
            return self.value(f)
        if rule == ID:
            return self.id(f)
        if rule == IDS:
            return self.ids(f)  # type: ignore[arg-type]
        if rule == ZXID:
            return self.zxid(f)
        if rule == SESSION:
            return self.session(f)
        if rule == PATH:
            return self.path(f)  # type: ignore[arg-type]
        if rule == PART_IDS:
            return self.part_ids(f)  # type: ignore[arg-type]
        return self.infos(f)  # type: ignore[arg-type]

    # components ----------------------------------------------------

    def zookeeper(self, snap: tuple) -> tuple:
        """Znode data holds no token (none of its classes has one), so only czxids, owners
        and the session sets are renamed; with no broker moving, paths and data stay."""
        nodes = snap[ZOOKEEPER.nodes]
        data_at, czxid_at, mzxid_at, owner_at = ZNODE.data, ZNODE.czxid, ZNODE.mzxid, ZNODE.owner
        if self.collect:
            for _p, enc in nodes:
                self.zxid(enc[czxid_at])
                self.session(enc[owner_at])
            for sid in snap[ZOOKEEPER.sessions]:
                self.session(sid)
            for n in snap[ZOOKEEPER.pending]:
                self.session(n[NOTIFICATION.session])
            return snap
        tokens = self.zxids is not None
        identity = self.identity
        renamed = nodes if identity else sorted((self.path(p), enc) for p, enc in nodes)
        out_nodes = []
        for path, enc in renamed:
            node = list(enc)
            if not identity:
                node[data_at] = self.value(enc[data_at])
                if path == BROKER_IDS:
                    node[ZNODE.children] = tuple(sorted(str(self.id(int(c)))
                                                        for c in enc[ZNODE.children]))
            node[czxid_at] = self.zxid(enc[czxid_at])
            if tokens:
                node[mzxid_at] = 0
            node[owner_at] = self.session(enc[owner_at])
            out_nodes.append((path, tuple(node)))
        pend = [self.value(n) for n in snap[ZOOKEEPER.pending]]
        at = NOTIFICATION.session
        pend.sort(key=lambda n: n[at])  # stable: each session's notifications keep their order
        out = list(snap)
        out[ZOOKEEPER.nodes] = tuple(out_nodes)
        if tokens:
            out[ZOOKEEPER.zxid] = out[ZOOKEEPER.next_session] = 0
        out[ZOOKEEPER.sessions] = tuple(sorted(self.session(s)
                                               for s in snap[ZOOKEEPER.sessions]))
        for watches in (ZOOKEEPER.data_watches, ZOOKEEPER.child_watches):  # (session, path)
            out[watches] = tuple(sorted((self.session(s), self.path(p))
                                        for s, p in snap[watches]))
        out[ZOOKEEPER.pending] = tuple(pend)
        return tuple(out)

    def channels(self, snap: tuple) -> tuple:
        """Channels sorted by their renamed key; a message that travels as
        ``(correlation, value)`` (requests: 0; ControlledShutdown and its answer: the
        broker epoch) has its correlation renamed as a zxid."""
        keyed = sorted(((self.value(k), q) for k, q in snap), key=lambda kq: kq[0])
        out = []
        for k, q in keyed:
            if k[CHANNEL_KEY.kind] == RESPONSE:
                out.append((k, tuple([self.value(m) for m in q])))
            else:
                out.append((k, tuple([(self.zxid(c), self.value(m)) for c, m in q])))
        return tuple(out)

    def controller(self, snap: tuple) -> tuple:
        out = list(snap)
        out[CONTROLLER.round] = self.round(snap[CONTROLLER.round])
        out[CONTROLLER.context] = self.context(snap[CONTROLLER.context])
        return tuple(out)

    def round(self, rnd: tuple | None) -> tuple | None:
        if rnd is None:
            return None
        out = list(rnd)
        out[ROUND.decisions] = tuple([self.decision(d) for d in rnd[ROUND.decisions]])
        out[ROUND.ops] = tuple([self.round_op(op) for op in rnd[ROUND.ops]])
        renamed = [self.followup(f) for f in rnd[ROUND.followups]]
        if self.zxids is not None:
            # StopReplica and join followups only fill the request batch (sets): their
            # order, which follows broker ids, says nothing
            batch = sorted(f for f in renamed if f[0] in _BATCH_ONLY)
            renamed = [f for f in renamed if f[0] not in _BATCH_ONLY] + batch
        out[ROUND.followups] = tuple(renamed)
        return tuple(out)

    def decision(self, d: tuple) -> tuple:
        out = list(d)
        if d[DECISION.kind] == SHUTDOWN:
            out[DECISION.arg] = self.id(d[DECISION.arg])
        out[DECISION.leader] = self.id(d[DECISION.leader])
        out[DECISION.isr] = self.ids(d[DECISION.isr])
        return tuple(out)

    def round_op(self, op: tuple) -> tuple:
        at = _ROUND_OPS.get(op[0])
        if at is None:
            raise SymmetryError(f"no relabelling rule for the write op {op[0]!r}")
        path_at, data_at = at
        out = list(op)
        out[path_at] = self.path(op[path_at])
        if data_at is not None:
            out[data_at] = self.round_data(op[data_at])
        return tuple(out)

    def round_data(self, data: tuple) -> tuple:
        name = data[0]
        if name == "":  # data of no class the round encodes (``("", data)``)
            return data
        rules = _ROUND_DATA_RULES.get(name)
        if rules is None:
            raise SymmetryError(f"no relabelling rule for write data {name!r}")
        return (name, *[f if rule is None else self.field(rule, f)
                        for rule, f in zip(rules, data[1:], strict=True)])

    def followup(self, f: tuple) -> tuple:
        rules = _FOLLOWUP_RULES.get(f[0])
        if rules is None:
            raise SymmetryError(f"no relabelling rule for the controller followup {f[0]!r}")
        return tuple([x if rule is None else self.field(rule, x)
                      for rule, x in zip(rules, f, strict=True)])

    def context(self, ctx: tuple) -> tuple:
        by_id = BROKER_INFO.broker_id
        out = list(ctx)
        out[CONTEXT.live] = tuple([self.broker_info(e) for e in sorted(
            ctx[CONTEXT.live], key=lambda e: self.id(e[by_id]))])
        out[CONTEXT.shutting_down] = tuple(sorted(self.ids(ctx[CONTEXT.shutting_down])))
        out[CONTEXT.assignment] = self.part_ids(ctx[CONTEXT.assignment])
        out[CONTEXT.states] = tuple([(tp, self.partition_state(st))
                                     for tp, st in ctx[CONTEXT.states]])
        out[CONTEXT.replica_states] = tuple([  # (broker, state value) pairs, by broker
            (tp, tuple(sorted((self.id(b), s) for b, s in rs)))
            for tp, rs in ctx[CONTEXT.replica_states]])
        out[CONTEXT.reassignments] = self.part_ids(ctx[CONTEXT.reassignments])
        out[CONTEXT.owed] = tuple([(tp, self.owed(o)) for tp, o in ctx[CONTEXT.owed]])
        return tuple(out)

    def broker_info(self, e: tuple) -> tuple:
        out = list(e)
        out[BROKER_INFO.broker_id] = self.id(e[BROKER_INFO.broker_id])
        out[BROKER_INFO.epoch] = self.zxid(e[BROKER_INFO.epoch])
        return tuple(out)

    def partition_state(self, st: tuple) -> tuple:
        out = list(st)
        out[PARTITION_STATE.leader] = self.id(st[PARTITION_STATE.leader])
        out[PARTITION_STATE.isr] = self.ids(st[PARTITION_STATE.isr])
        return tuple(out)

    def owed(self, o: tuple) -> tuple:
        if o[OWED.kind] != SHUTDOWN:
            return o
        out = list(o)
        out[OWED.arg] = self.id(o[OWED.arg])
        return tuple(out)

    def broker(self, snap: tuple) -> tuple:
        out = list(snap)
        out[BROKER.epoch] = self.zxid(snap[BROKER.epoch])
        out[BROKER.replicas] = tuple([(tp, self.replica(r)) for tp, r in snap[BROKER.replicas]])
        out[BROKER.cache] = self.cache(snap[BROKER.cache])
        out[BROKER.pending] = tuple([(t, self.pending(w)) for t, w in snap[BROKER.pending]])
        applied = snap[BROKER.applied]
        if applied is not None:
            mark = list(applied)
            mark[APPLIED.broker_epoch] = self.zxid(applied[APPLIED.broker_epoch])
            out[BROKER.applied] = tuple(mark)
        return tuple(out)

    def cache(self, cache: tuple) -> tuple:
        out = list(cache)
        out[CACHE.partitions] = tuple([(tp, self.metadata_partition(m))
                                       for tp, m in cache[CACHE.partitions]])
        out[CACHE.live_brokers] = tuple([  # (broker id, BrokerInfoFields), by broker id
            (self.id(b), self.broker_info(info))
            for b, info in sorted(cache[CACHE.live_brokers], key=lambda x: self.id(x[0]))])
        out[CACHE.controller_id] = self.id(cache[CACHE.controller_id])
        return tuple(out)

    def metadata_partition(self, m: tuple) -> tuple:
        out = list(m)
        out[METADATA_PARTITION.leader] = self.id(m[METADATA_PARTITION.leader])
        for at in (METADATA_PARTITION.isr, METADATA_PARTITION.replicas,
                   METADATA_PARTITION.offline_replicas):
            out[at] = self.ids(m[at])
        return tuple(out)

    def pending(self, w: tuple) -> tuple:
        out = list(w)
        out[PENDING.isr] = self.ids(w[PENDING.isr])
        return tuple(out)

    def replica(self, r: tuple) -> tuple:
        out = list(r)
        out[REPLICA.leader] = self.id(r[REPLICA.leader])
        out[REPLICA.isr] = self.ids(r[REPLICA.isr])
        out[REPLICA.replicas] = self.ids(r[REPLICA.replicas])
        seen = r[REPLICA.zk_seen]
        if seen is not None:
            found = list(seen)
            found[ZK_SEEN.leader] = self.id(seen[ZK_SEEN.leader])
            found[ZK_SEEN.isr] = self.ids(seen[ZK_SEEN.isr])
            out[REPLICA.zk_seen] = tuple(found)
        return tuple(out)

    def proc(self, p: tuple) -> tuple:
        out = list(p)
        out[PROC.broker_session] = self.session(p[PROC.broker_session])
        out[PROC.controller_session] = self.session(p[PROC.controller_session])
        if p[PROC.forgotten]:
            out[PROC.forgotten] = tuple(sorted(self.ids(p[PROC.forgotten])))
        return tuple(out)

    def timer(self, t: tuple) -> tuple:
        out = list(t)
        out[TIMER.broker] = self.id(t[TIMER.broker])
        return tuple(out)


_BATCH_ONLY = frozenset({"stop", "join"})


def _sessions_in_order(procs: tuple, order: list[int], ids: tuple[int, ...]) -> dict[int, int]:
    """Live sessions named by the broker (in the new order) and role holding them."""
    out: dict[int, int] = {0: 0}
    for old in order:
        p = procs[ids.index(old)]
        for s in (p[PROC.broker_session], p[PROC.controller_session]):
            if s and s not in out:
                out[s] = len(out)
    return out


def _rest(r: _Renaming, rest: tuple, order: list[int], ids: tuple[int, ...]) -> tuple:
    procs, queues = rest[REST.procs], rest[REST.queues]
    out = list(rest)
    out[REST.procs] = tuple([r.proc(procs[ids.index(b)]) for b in order])
    out[REST.queues] = tuple([r.value(queues[ids.index(b)]) for b in order])
    out[REST.writes] = tuple(sorted((r.id(b), r.value(w)) for b, w in rest[REST.writes]))
    out[REST.timers] = tuple(sorted(r.timer(t) for t in rest[REST.timers]))
    out[REST.accepted] = r.part_ids(rest[REST.accepted])
    return tuple(out)


def _apply(r: _Renaming, kind: str, comp: tuple, order: list[int], ids: tuple[int, ...]
           ) -> tuple:
    if kind == "zk":
        return r.zookeeper(comp)
    if kind == "channels":
        return r.channels(comp)
    if kind == "controller":
        return r.controller(comp)
    if kind == "broker":
        return r.broker(comp)
    return _rest(r, comp, order, ids)


def _component_tokens(kind: str, comp: tuple, order: list[int], ids: tuple[int, ...],
                      memo: RenameMemo | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The zxids and sessions a component holds (sorted; with ``memo``, remembered by the
    component's identity)."""
    if memo is not None:
        hit = memo.tokens.get(comp)
        if hit is not None:
            return hit
    r = _Renaming({}, collect=True)
    _apply(r, kind, comp, order, ids)
    out = tuple(sorted(r.seen_zxids)), tuple(sorted(r.seen_sessions))
    return out if memo is None else memo.tokens.put(comp, None, out)


def _czxids(zk: tuple, memo: RenameMemo | None) -> dict[int, tuple[str, ...]]:
    """zxid -> the paths of the znodes it created (with ``memo``, remembered by the
    snapshot's identity)."""
    if memo is not None:
        hit = memo.czxids.get(zk)
        if hit is not None:
            return hit
    out: dict[int, tuple[str, ...]] = {}
    czxid_at = ZNODE.czxid
    for path, enc in zk[ZOOKEEPER.nodes]:
        out[enc[czxid_at]] = out.get(enc[czxid_at], ()) + (path,)
    return out if memo is None else memo.czxids.put(zk, None, out)


def _zxid_names(zxids: set[int], created: dict[int, tuple[str, ...]],
                path: Callable[[str], str]) -> dict[int, int]:
    """Canonical names for the zxids a world holds. The core compares zxids only for
    equality (a broker epoch with a broker epoch), so a name need not keep their order: a
    zxid that created a znode is named after the (renamed) path of that znode; the others
    -- epochs of registrations that are gone -- after their order among themselves. (So
    the world where broker 3 crashed and the one where broker 4 did meet, whichever of the
    two registered first.)"""
    keys = {}
    stale = []
    for z in zxids:
        paths = created.get(z)
        if paths is None:
            stale.append(z)
        else:
            keys[z] = (0, min(path(p) for p in paths))
    stale.sort()
    for i, z in enumerate(stale):
        keys[z] = (1, str(i))
    return {z: i + 1 for i, z in enumerate(sorted(zxids, key=keys.__getitem__))}


def relabel(snap: tuple, config: WorldConfig, perm: dict[int, int], tokens: bool = True,
            memo: RenameMemo | None = None) -> tuple:
    """The world ``snap`` with broker ``b`` renamed ``perm[b]`` (a permutation of the broker
    ids; absent ids stay). ``tokens``: sessions and zxids get canonical names -- a zxid
    after the znode it created (``_zxid_names``), a live session after the place of the
    broker and role holding it, a dead one 0 -- and fields nobody reads are dropped: a key,
    not a world to run. Without, the result is the renamed world itself (``World.restore`` runs it: the
    tests compare its steps with the original's).

    Components are renamed one by one; with ``memo`` (the search's) each is remembered by
    (identity, renaming, the names of its own tokens): a step leaves most of them as they
    were."""
    ids = config.broker_ids
    layout = world_layout(len(ids))
    inverse = {new: old for old, new in perm.items()}
    order = [inverse.get(b, b) for b in ids]  # old ids, in the order of their new ids
    controllers, brokers = snap[layout.controllers], snap[layout.brokers]
    # the components in the order of the layout: ZooKeeper, channels, cores, rest
    comps: list[tuple[str, tuple]] = [("zk", snap[layout.zookeeper]),
                                      ("channels", snap[layout.channels])]
    comps += [("controller", controllers[ids.index(b)]) for b in order]
    comps += [("broker", brokers[ids.index(b)]) for b in order]
    comps.append(("rest", snap[layout.rest]))
    if not tokens:
        r = _Renaming(perm, memo=memo)
        return tuple([_apply(r, kind, comp, order, ids) for kind, comp in comps])
    procs = snap[layout.rest][REST.procs]
    sessions = _sessions_in_order(procs, order, ids)
    held = [_component_tokens(kind, comp, order, ids, memo) for kind, comp in comps]
    ranks = _zxid_names(set().union(*[zs for zs, _ in held]),
                        _czxids(snap[layout.zookeeper], memo), _Renaming(perm).path)
    if memo is None:
        r = _Renaming(perm, sessions, ranks)
        return tuple([_apply(r, kind, comp, order, ids) for kind, comp in comps])
    pkey = tuple([perm.get(b, b) for b in ids])
    renamed = memo.renamed
    out = []
    for (kind, comp), (zs, ss) in zip(comps, held, strict=True):
        key = (pkey, tuple([ranks[z] for z in zs]), tuple([sessions.get(s, 0) for s in ss]))
        hit = renamed.get(comp, key)
        if hit is None:
            hit = renamed.put(comp, key, _apply(_Renaming(perm, sessions, ranks, memo=memo),
                                                kind, comp, order, ids))
        out.append(hit)
    return tuple(out)


# ---------------------------------------------------------------- signatures and the key


def _signatures(snap: tuple, config: WorldConfig, decode: Callable[[Any], Any] = decode
                ) -> dict[int, tuple]:
    """What each broker looks like, independently of its id and of token values."""
    ids = config.broker_ids
    layout = world_layout(len(ids))
    rest = snap[layout.rest]
    procs, queues, timers = rest[REST.procs], rest[REST.queues], rest[REST.timers]
    places: dict[int, list] = {b: [] for b in ids}
    controller = None
    for path, enc in snap[layout.zookeeper][ZOOKEEPER.nodes]:
        data = enc[ZNODE.data]
        if type(data) is tuple and data and type(data[0]) is str:
            value = decode(data)
            if isinstance(value, V.TopicAssignment):
                for p, reps in value.partitions:
                    for i, b in enumerate(reps):
                        if b in places:
                            places[b].append((path, p, i))
            elif isinstance(value, V.LeaderAndIsr):
                if value.leader in places:
                    places[value.leader].append((path, "leader"))
                for b in value.isr:
                    if b in places:
                        places[b].append((path, "isr"))
            elif isinstance(value, Z.ControllerZnode):
                controller = value.broker_id
    controllers, brokers = snap[layout.controllers], snap[layout.brokers]
    out = {}
    for i, b in enumerate(ids):
        proc = list(procs[i])  # the process, its sessions only as "has one"
        proc[PROC.broker_session] = bool(proc[PROC.broker_session])
        proc[PROC.controller_session] = bool(proc[PROC.controller_session])
        proc[PROC.forgotten] = len(proc[PROC.forgotten])
        c = controllers[i]
        core = brokers[i]
        out[b] = (
            tuple(proc),
            core[BROKER.state], core[BROKER.controller_epoch],
            tuple(sorted((tp, r[REPLICA.role], r[REPLICA.leader_epoch])
                         for tp, r in core[BROKER.replicas])),
            (c[CONTROLLER.active], c[CONTROLLER.loaded], c[CONTROLLER.epoch]),
            c[CONTROLLER.round] is None, b == controller, len(queues[i]),
            tuple(sorted((t[TIMER.role], t[TIMER.kind]) for t in timers
                         if t[TIMER.broker] == b)),
            tuple(sorted(places[b])),
        )
    return out


def candidates(snap: tuple, config: WorldConfig, decode: Callable[[Any], Any] = decode
               ) -> list[dict[int, int]] | None:
    """The renamings to try: free brokers sorted by signature onto the free ids, ties in
    every order. None: too many (large tie groups); the world keeps its own key."""
    ids = config.broker_ids
    admin_done = snap[world_layout(len(ids)).rest][REST.admin]
    free = [b for b in ids if b not in named_brokers(config, admin_done)]
    if len(free) < 2:
        return [{}]
    sig = _signatures(snap, config, decode)
    free.sort(key=lambda b: sig[b])
    groups: list[list[int]] = []
    for b in free:
        if groups and sig[groups[-1][0]] == sig[b]:
            groups[-1].append(b)
        else:
            groups.append([b])
    count = 1
    for g in groups:
        for k in range(2, len(g) + 1):
            count *= k
    if count > MAX_CANDIDATES:
        return None
    slots = sorted(free)
    out = []
    for choice in product(*[permutations(g) for g in groups]):
        order = [b for g in choice for b in g]
        out.append({old: new for old, new in zip(order, slots, strict=True)})
    return out


def canonical(snap: tuple, config: WorldConfig, memo: RenameMemo | None = None) -> int:
    """The class key of world ``snap``: the smallest fingerprint of its candidate
    renamings (equal for two worlds that are renamings of each other over free brokers).
    ``memo``: the search's, for the renamings (``relabel``)."""
    perms = candidates(snap, config, decode if memo is None else memo.codec.decode)
    if perms is None:
        return fingerprint(("own", snap))
    digests = None if memo is None else memo.digests
    return min(fingerprint(relabel(snap, config, p, memo=memo), digests) for p in perms)


def canonicalizer(config: WorldConfig, limit: int = 2_000_000,
                  memo: RenameMemo | None = None) -> Callable[[tuple], int]:
    """``canonical`` bound to ``config`` (and the search's ``memo``: ``Memos.renames``),
    remembered by the world's own fingerprint (a world reached again by another path is not
    renamed again; up to ``limit`` worlds)."""
    keys: dict[int, int] = {}
    digests = None if memo is None else memo.digests

    def canon(snap: tuple) -> int:
        real = fingerprint(snap, digests)
        key = keys.get(real)
        if key is None:
            key = canonical(snap, config, memo)
            if len(keys) >= limit:
                keys.clear()
            keys[real] = key
        return key

    return canon
