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

Everything here reads the layouts of the world's and the cores' snapshots; a value of a
kind it has no rule for raises ``SymmetryError`` rather than being copied unrenamed.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from itertools import permutations, product

from fsm import events as E
from fsm import requests as Q
from fsm import values as V
from fsm import znodes as Z
from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkWrite
from fsm.errors import ErrorCode
from fsm.zk_paths import BROKER_IDS
from fsm.zk_session_states import ZkClientState
from model_check.world import state as S
from model_check.world.channels import RESPONSE, ChannelKey
from model_check.world.codec import FROZENSET, decode, tag_of
from model_check.world.config import (
    AddPartitions,
    ControlledShutdownOf,
    CreateTopic,
    Reassign,
    WorldConfig,
)
from model_check.world.fingerprint import fingerprint
from model_check.world.zookeeper import Notification

_LIMIT = 100_000
"""Bound on each memo (cleared when full)."""
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
_TOKEN_FREE: frozenset[str] = frozenset()
_free_memo: dict[tuple, tuple[tuple, tuple]] = {}
_RULES: dict[str, tuple[int | None, ...]] = {}


def _rules() -> dict[str, tuple[int | None, ...]]:
    global _TOKEN_FREE
    if not _RULES:
        _TOKEN_FREE = frozenset(tag_of(cls)[0] for cls in _TOKEN_FREE_CLASSES)
        for cls, rules in _RULES_BY_CLASS.items():
            tag, fields = tag_of(cls)
            _RULES[tag] = tuple(rules.get(f) for f in fields)
        for cls in _NO_BROKER_IDS:
            tag, fields = tag_of(cls)
            _RULES[tag] = (None,) * (1 if issubclass(cls, enum.Enum) else len(fields))
    return _RULES


# ---------------------------------------------------------------- the renaming pass


class _Renaming:
    """One pass over a component: broker ids by ``perm``; tokens by the maps ``sessions``
    and ``zxids`` (None: tokens keep their values -- a runnable world). ``collect``: keep
    every token met (in ``seen_zxids``/``seen_sessions``) and leave it as it is."""

    def __init__(self, perm: dict[int, int], sessions: dict[int, int] | None = None,
                 zxids: dict[int, int] | None = None, collect: bool = False) -> None:
        self.perm = perm
        self.sessions = sessions
        self.zxids = zxids
        self.collect = collect
        self.seen_zxids: set[int] = set()
        self.seen_sessions: set[int] = set()
        self.rules = _rules()
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
        order = sorted(infos, key=lambda e: self.id(e[1]))  # sorted by id, then walked
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
            if head in _TOKEN_FREE:
                if self.collect or self.identity:
                    return x
                key = (id(x), self.pkey)
                hit = _free_memo.get(key)
                if hit is not None and hit[0] is x:
                    return hit[1]
                out = self.tagged(x)
                if len(_free_memo) >= _LIMIT:
                    _free_memo.clear()
                _free_memo[key] = (x, out)
                return out
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
        nodes, zxid, next_session, sessions, dw, cw, pending = snap
        if self.collect:
            for _p, enc in nodes:
                self.zxid(enc[4])
                self.session(enc[6])
            for sid in sessions:
                self.session(sid)
            for n in pending:
                self.session(n[1])
            return snap
        tokens = self.zxids is not None
        identity = self.identity
        renamed = nodes if identity else sorted((self.path(p), enc) for p, enc in nodes)
        out_nodes = []
        for path, enc in renamed:
            tag, data, version, cversion, czxid, mzxid, owner, children = enc
            if not identity:
                data = self.value(data)
                if path == BROKER_IDS:
                    children = tuple(sorted(str(self.id(int(c))) for c in children))
            out_nodes.append((path, (tag, data, version, cversion, self.zxid(czxid),
                                     0 if tokens else mzxid, self.session(owner), children)))
        pend = [self.value(n) for n in pending]
        pend.sort(key=lambda n: n[1])  # stable: each session's notifications keep their order
        return (tuple(out_nodes), 0 if tokens else zxid, 0 if tokens else next_session,
                tuple(sorted(self.session(s) for s in sessions)),
                tuple(sorted((self.session(s), self.path(p)) for s, p in dw)),
                tuple(sorted((self.session(s), self.path(p)) for s, p in cw)),
                tuple(pend))

    def channels(self, snap: tuple) -> tuple:
        """Channels sorted by their renamed key; a message that travels as
        ``(correlation, value)`` (requests: 0; ControlledShutdown and its answer: the
        broker epoch) has its correlation renamed as a zxid."""
        keyed = sorted(((self.value(k), q) for k, q in snap), key=lambda kq: kq[0])
        out = []
        for k, q in keyed:
            if k[1] == RESPONSE:
                out.append((k, tuple([self.value(m) for m in q])))
            else:
                out.append((k, tuple([(self.zxid(c), self.value(m)) for c, m in q])))
        return tuple(out)

    def controller(self, snap: tuple) -> tuple:
        active, loaded, epoch, fence, seen, session, rnd, token, ctx = snap
        return (active, loaded, epoch, fence, seen, session, self.round(rnd), token,
                self.context(ctx))

    def round(self, rnd: tuple | None) -> tuple | None:
        if rnd is None:
            return None
        token, kind, decisions, ops, followups, retry, election = rnd
        decisions = tuple([
            (tp, k, self.id(arg) if k == "shutdown" else arg, self.id(leader), le,
             self.ids(isr), ce, version, create)
            for tp, k, arg, leader, le, isr, ce, version, create in decisions])
        ops = tuple([self.round_op(op) for op in ops])
        renamed = [self.followup(f) for f in followups]
        if self.zxids is not None:
            # StopReplica and join followups only fill the request batch (sets): their
            # order, which follows broker ids, says nothing
            batch = sorted(f for f in renamed if f[0] in _BATCH_ONLY)
            renamed = [f for f in renamed if f[0] not in _BATCH_ONLY] + batch
        followups = tuple(renamed)
        return (token, kind, decisions, ops, followups, retry, election)

    def round_op(self, op: tuple) -> tuple:
        name, path, *rest = op
        if name in ("CreateOp", "SetDataOp"):
            rest[0] = self.round_data(rest[0])
        return (name, self.path(path), *rest)

    def round_data(self, data: tuple) -> tuple:
        name = data[0]
        if name == "LeaderAndIsr":
            return (name, self.id(data[1]), data[2], self.ids(data[3]), data[4])
        if name == "TopicAssignment":
            return (name, *[self.part_ids(x) for x in data[1:]])
        if name == "ReassignmentZnode":
            return (name, self.part_ids(data[1]))
        if name == "ControllerZnode":
            return (name, self.id(data[1]), *data[2:])
        if name in ("ControllerEpochZnode", ""):  # an epoch; data of no broker
            return data
        raise SymmetryError(f"no relabelling rule for write data {name or data[1]!r}")

    def followup(self, f: tuple) -> tuple:
        kind = f[0]
        if kind == "stop" or kind == "join":
            return (kind, self.id(f[1]), *f[2:])
        if kind == "reply":
            return (kind, self.id(f[1]), self.zxid(f[2]))
        if kind == "expand":
            return (kind, f[1], self.ids(f[2]))
        if kind in ("expanded", "complete", "full", "um-everyone", "deleting", "online"):
            return f
        raise SymmetryError(f"no relabelling rule for the controller followup {kind!r}")

    def context(self, ctx: tuple) -> tuple:
        (live, shutting, topics, assignment, states, pstates, rstates, reassign, to_delete,
         ineligible, owed) = ctx
        live = tuple([(self.id(b), self.zxid(e), ends, rack)
                      for b, e, ends, rack in sorted(live, key=lambda x: self.id(x[0]))])
        return (
            live,
            tuple(sorted(self.ids(shutting))),
            topics,
            self.part_ids(assignment),
            tuple([(tp, (self.id(ld), le, self.ids(isr), ce, v))
                   for tp, (ld, le, isr, ce, v) in states]),
            pstates,
            tuple([(tp, tuple(sorted((self.id(b), s) for b, s in rs))) for tp, rs in rstates]),
            self.part_ids(reassign),
            to_delete,
            ineligible,
            tuple([(tp, (k, self.id(arg) if k == "shutdown" else arg, due))
                   for tp, (k, arg, due) in owed]),
        )

    def broker(self, snap: tuple) -> tuple:
        (state, epoch, ce, replicas, cache, pending, attempts, wanted, registering,
         applied) = snap
        replicas = tuple([(tp, self.replica(r)) for tp, r in replicas])
        parts, live, controller_id = cache
        parts = tuple([(tp, (self.id(ld), le, self.ids(isr), self.ids(reps), self.ids(off)))
                       for tp, (ld, le, isr, reps, off) in parts])
        live = tuple([(self.id(b), (self.id(i), self.zxid(e), ends, rack))
                      for b, (i, e, ends, rack) in sorted(live, key=lambda x: self.id(x[0]))])
        pending = tuple([(t, (kind, tp, self.ids(isr), base))
                         for t, (kind, tp, isr, base) in pending])
        if applied is not None:
            applied = (applied[0], self.zxid(applied[1]), applied[2])
        return (state, self.zxid(epoch), ce, replicas, (parts, live, self.id(controller_id)),
                pending, attempts, wanted, registering, applied)

    def replica(self, r: tuple) -> tuple:
        role, leader, le, isr, zkv, replicas, ce, fenced, seen = r
        if seen is not None:
            seen = (self.id(seen[0]), seen[1], self.ids(seen[2]), seen[3], seen[4])
        return (role, self.id(leader), le, self.ids(isr), zkv, self.ids(replicas), ce, fenced,
                seen)


_BATCH_ONLY = frozenset({"stop", "join"})


def _sessions_in_order(procs: tuple, order: list[int], ids: tuple[int, ...]) -> dict[int, int]:
    """Live sessions named by the broker (in the new order) and role holding them."""
    out: dict[int, int] = {0: 0}
    for old in order:
        p = procs[ids.index(old)]
        for s in (p[2], p[3]):
            if s and s not in out:
                out[s] = len(out)
    return out


def _rest(r: _Renaming, rest: tuple, order: list[int], ids: tuple[int, ...]) -> tuple:
    procs, queues, writes, timers, used, admin, accepted = rest
    return (
        tuple([tuple(p[:2]) + (r.session(p[2]), r.session(p[3])) + tuple(p[4:])
               for p in (procs[ids.index(b)] for b in order)]),
        tuple([r.value(queues[ids.index(b)]) for b in order]),
        tuple(sorted((r.id(b), r.value(w)) for b, w in writes)),
        tuple(sorted((r.id(b), role, kind) for b, role, kind in timers)),
        used,
        admin,
        r.part_ids(accepted),
    )


_tokens: dict[int, tuple[tuple, tuple[int, ...], tuple[int, ...]]] = {}
_renamed: dict[tuple, tuple[tuple, tuple]] = {}


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


def _component_tokens(kind: str, comp: tuple, order: list[int], ids: tuple[int, ...]
                      ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The zxids and sessions a component holds (sorted), memoised by its identity."""
    hit = _tokens.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1], hit[2]
    r = _Renaming({}, collect=True)
    _apply(r, kind, comp, order, ids)
    zs, ss = tuple(sorted(r.seen_zxids)), tuple(sorted(r.seen_sessions))
    if len(_tokens) >= _LIMIT:
        _tokens.clear()
    _tokens[id(comp)] = (comp, zs, ss)
    return zs, ss


_czxid_memo: dict[int, tuple[tuple, dict[int, tuple[str, ...]]]] = {}


def _czxids(zk: tuple) -> dict[int, tuple[str, ...]]:
    """zxid -> the paths of the znodes it created (memoised by the snapshot's identity)."""
    hit = _czxid_memo.get(id(zk))
    if hit is not None and hit[0] is zk:
        return hit[1]
    out: dict[int, tuple[str, ...]] = {}
    for path, enc in zk[0]:
        out[enc[4]] = out.get(enc[4], ()) + (path,)
    if len(_czxid_memo) >= _LIMIT:
        _czxid_memo.clear()
    _czxid_memo[id(zk)] = (zk, out)
    return out


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


def relabel(snap: tuple, config: WorldConfig, perm: dict[int, int], tokens: bool = True
            ) -> tuple:
    """The world ``snap`` with broker ``b`` renamed ``perm[b]`` (a permutation of the broker
    ids; absent ids stay). ``tokens``: sessions and zxids get canonical names -- a zxid
    after the znode it created (``_zxid_names``), a live session after the place of the
    broker and role holding it, a dead one 0 -- and fields nobody reads are dropped: a key,
    not a world to run. Without, the result is the renamed world itself (``World.restore`` runs it: the
    tests compare its steps with the original's).

    Components are renamed one by one and memoised by (identity, renaming, the names of
    their own tokens): a step leaves most of them as they were."""
    ids = config.broker_ids
    n = len(ids)
    inverse = {new: old for old, new in perm.items()}
    order = [inverse.get(b, b) for b in ids]  # old ids, in the order of their new ids
    comps: list[tuple[str, tuple]] = [("zk", snap[0]), ("channels", snap[1])]
    comps += [("controller", snap[2 + ids.index(b)]) for b in order]
    comps += [("broker", snap[2 + n + ids.index(b)]) for b in order]
    comps.append(("rest", snap[2 + 2 * n]))
    if not tokens:
        r = _Renaming(perm)
        zk, ch, *parts = [_apply(r, kind, comp, order, ids) for kind, comp in comps]
        return (zk, ch, *parts)
    procs = snap[2 + 2 * n][0]
    sessions = _sessions_in_order(procs, order, ids)
    held = [_component_tokens(kind, comp, order, ids) for kind, comp in comps]
    ranks = _zxid_names(set().union(*[zs for zs, _ in held]), _czxids(snap[0]),
                        _Renaming(perm).path)
    pkey = tuple([perm.get(b, b) for b in ids])
    out = []
    for (kind, comp), (zs, ss) in zip(comps, held, strict=True):
        key = (id(comp), pkey, tuple([ranks[z] for z in zs]),
               tuple([sessions.get(s, 0) for s in ss]))
        hit = _renamed.get(key)
        if hit is not None and hit[0] is comp:
            out.append(hit[1])
            continue
        renamed = _apply(_Renaming(perm, sessions, ranks), kind, comp, order, ids)
        if len(_renamed) >= _LIMIT:
            _renamed.clear()
        _renamed[key] = (comp, renamed)
        out.append(renamed)
    return tuple(out)


# ---------------------------------------------------------------- signatures and the key


def _signatures(snap: tuple, config: WorldConfig) -> dict[int, tuple]:
    """What each broker looks like, independently of its id and of token values."""
    ids = config.broker_ids
    n = len(ids)
    procs, queues, _writes, timers, _used, _admin, _accepted = snap[2 + 2 * n]
    zk_nodes = snap[0][0]
    places: dict[int, list] = {b: [] for b in ids}
    controller = None
    for path, enc in zk_nodes:
        data = enc[1]
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
    out = {}
    for i, b in enumerate(ids):
        p = procs[i]
        c = snap[2 + i]
        core = snap[2 + n + i]
        out[b] = (
            (p[0], p[1], bool(p[2]), bool(p[3])) + tuple(p[4:]),
            core[0], core[2], tuple(sorted((tp, r[0], r[2]) for tp, r in core[3])),
            c[:3], c[6] is None, b == controller, len(queues[i]),
            tuple(sorted((role, kind) for tb, role, kind in timers if tb == b)),
            tuple(sorted(places[b])),
        )
    return out


def candidates(snap: tuple, config: WorldConfig) -> list[dict[int, int]] | None:
    """The renamings to try: free brokers sorted by signature onto the free ids, ties in
    every order. None: too many (large tie groups); the world keeps its own key."""
    ids = config.broker_ids
    admin_done = snap[2 + 2 * len(ids)][5]
    free = [b for b in ids if b not in named_brokers(config, admin_done)]
    if len(free) < 2:
        return [{}]
    sig = _signatures(snap, config)
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


def canonical(snap: tuple, config: WorldConfig) -> int:
    """The class key of world ``snap``: the smallest fingerprint of its candidate
    renamings (equal for two worlds that are renamings of each other over free brokers)."""
    perms = candidates(snap, config)
    if perms is None:
        return fingerprint(("own", snap))
    return min(fingerprint(relabel(snap, config, p)) for p in perms)


def canonicalizer(config: WorldConfig, limit: int = 2_000_000) -> Callable[[tuple], int]:
    """``canonical`` bound to ``config``, memoised by the world's own fingerprint (a world
    reached again by another path is not renamed again; up to ``limit`` worlds)."""
    memo: dict[int, int] = {}

    def canon(snap: tuple) -> int:
        real = fingerprint(snap)
        key = memo.get(real)
        if key is None:
            key = canonical(snap, config)
            if len(memo) >= limit:
                memo.clear()
            memo[real] = key
        return key

    return canon
