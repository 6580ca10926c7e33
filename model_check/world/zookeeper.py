"""An in-memory ZooKeeper with the semantics the controller depends on.

* znodes hold the ``fsm`` value objects as they are (no JSON), with a data
  ``version``, a ``cversion``, ``czxid``/``mzxid`` from one global zxid counter
  (a ``multi`` is one transaction: one zxid), and the owning session of an
  ephemeral znode (0 for a persistent one);
* sessions: open, expire/close (its ephemerals are deleted, its watches dropped);
* one-shot data watches (``get``/``exists``, also on an absent path) and child
  watches, registered per session; a fired watch becomes a pending notification
  ``(session, path, kind)``, delivered one at a time by the world, FIFO per session;
* ``multi`` of Create/SetData/Delete/Check ops that commits as a whole or not at
  all, with per-op error codes (``BadVersion``, ``NoNode``, ``NodeExists``,
  ``NotEmpty``); sequential znodes get a 10-digit suffix from the parent's
  cversion; ``DeleteOp(recursive=True)`` deletes the subtree; ``CreateOp(make_parents=True)``
  creates missing parents (persistent, ``EmptyZnode``) as Kafka's ``createRecursive`` does.

State is one dict ``path -> Znode`` (immutable values) plus small sets. The snapshot is
builtins only (encoded by the ``codec`` it was given -- during a search the memos', which
encodes each ``Znode`` and its data value once) and cached until the next change: every
method that changes the state drops ``_snap``, and every change of ``nodes`` records its
path in ``_dirty``, so the next snapshot re-encodes only those znodes. A restore copies a
decoded dict (``Codec.decoded_dict``, shared by the memos' codec).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple

from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkOp
from fsm.snapshot_fields import positions
from fsm.znodes import EmptyZnode
from model_check.world.codec import PLAIN, Codec, tagged_positions
from model_check.world.fingerprint import Shared

OK = "Ok"
NO_NODE = "NoNode"
NODE_EXISTS = "NodeExists"
BAD_VERSION = "BadVersion"
NOT_EMPTY = "NotEmpty"
NO_CHILDREN_FOR_EPHEMERALS = "NoChildrenForEphemerals"
SESSION_EXPIRED = "SessionExpired"
ROLLED_BACK = "RuntimeInconsistency"
"""ZooKeeper's code for the ops of a failed ``multi`` that did not fail themselves."""

# notification kinds (ZooKeeper's EventType)
CREATED = "NodeCreated"
DELETED = "NodeDeleted"
CHANGED = "NodeDataChanged"
CHILDREN = "NodeChildrenChanged"

EMPTY = EmptyZnode()


class Znode(NamedTuple):
    data: object
    version: int
    cversion: int
    czxid: int
    mzxid: int
    owner: int  # session id of an ephemeral znode, 0 for a persistent one
    children: tuple[str, ...]  # sorted child names


class Notification(NamedTuple):
    session: int
    path: str
    kind: str


class ZooKeeperSnapshotFields(NamedTuple):
    """``ZooKeeper.snapshot()``, field by field (``fsm.snapshot_fields``: the snapshot stays a
    plain tuple)."""

    nodes: tuple  # ``(path, encoded Znode)`` sorted by path: ``ZNODE`` names the positions
    zxid: int
    next_session: int
    sessions: tuple[int, ...]  # the live sessions, sorted
    data_watches: tuple  # ``(session, path)``, sorted
    child_watches: tuple  # ``(session, path)``, sorted
    pending: tuple  # the encoded ``Notification``s not delivered yet, in order


ZOOKEEPER = positions(ZooKeeperSnapshotFields)
ZNODE = tagged_positions(Znode)
"""Positions in an encoded znode ``(TAG, *Znode fields)``: ``enc[ZNODE.czxid]``."""
NOTIFICATION = tagged_positions(Notification)
"""Positions in an encoded ``Notification``."""


class OpResult(NamedTuple):
    code: str
    path: str  # the created path (sequential names resolved) or the op's path


class MultiResult(NamedTuple):
    ok: bool
    results: tuple[OpResult, ...]
    zxid: int  # the transaction's zxid (0 when it failed)

    def first_error(self) -> OpResult | None:
        for r in self.results:
            if r.code not in (OK, ROLLED_BACK):
                return r
        return None


def parent_of(path: str) -> str:
    i = path.rfind("/")
    return "/" if i == 0 else path[:i]


def name_of(path: str) -> str:
    return path[path.rfind("/") + 1:]


def join(parent: str, name: str) -> str:
    return f"/{name}" if parent == "/" else f"{parent}/{name}"


ROOT = Znode(EMPTY, 0, 0, 0, 0, 0, ())


class _SharedSnapshots:
    """``shared(snapshot)``: one object per value, as ``fingerprint.Shared`` gives, without
    hashing all the znodes each time: the znode tuple is made one object per value first
    (remembered by identity: most snapshots keep their parent's), and the snapshot is then
    looked up by that object's identity and the small fields."""

    __slots__ = ("_by_id", "_nodes", "_table")

    def __init__(self) -> None:
        self._nodes = Shared()
        self._by_id: dict[int, tuple[tuple, tuple]] = {}  # id(znodes) -> (them, the shared)
        self._table: dict[tuple, tuple] = {}

    def __call__(self, snap: tuple) -> tuple:
        nodes = snap[0]
        known = self._by_id.get(id(nodes))
        if known is None or known[0] is not nodes:
            if len(self._by_id) >= 100_000:
                self._by_id.clear()
            known = self._by_id[id(nodes)] = (nodes, self._nodes(nodes))  # type: ignore[assignment]
        one = known[1]
        key = (id(one), *snap[1:])  # the shared snapshot holds ``one``: its id stays its own
        hit = self._table.get(key)
        if hit is None:
            if len(self._table) >= 100_000:
                self._table.clear()
            hit = self._table[key] = snap if one is nodes else (one, *snap[1:])
        return hit


shared = _SharedSnapshots()
"""Snapshots, one object per value (``World.canonical``): an intern table, not a memo of the
search (``fingerprint.Shared``; its ``_by_id`` only finds the shared znode tuple faster)."""


class _Base(NamedTuple):
    """A snapshot and its parts decoded (never changed: a restored ZooKeeper copies them;
    its next snapshot keeps a part's encoding while the part equals the one here)."""

    snap: tuple
    nodes: dict[str, Znode]
    sessions: set[int]
    data_watches: set[tuple[int, str]]
    child_watches: set[tuple[int, str]]
    pending: tuple[Notification, ...]


def decode_base(snap: tuple, codec: Codec) -> _Base:
    """``snap`` decoded (``Codec.derived``: the search's codec remembers it by identity)."""
    nodes, _zxid, _next, sessions, dw, cw, pending = snap
    return _Base(snap, codec.decoded_dict(nodes), set(sessions), set(dw), set(cw),
                 codec.decode(pending))
_shared_note = Shared(10_000)
"""Notifications, one object per value: their encodings are then memo hits (``codec``). An
intern table, not a memo of the search (``fingerprint.Shared``)."""


class ZooKeeper:
    """The ensemble as one linearizable store (what every client sees after a sync)."""

    def __init__(self, codec: Codec = PLAIN) -> None:
        """``codec``: how the snapshots encode and decode (``World.codec``)."""
        self.codec = codec
        self.nodes: dict[str, Znode] = {"/": ROOT}
        self.zxid = 0
        self.next_session = 1
        self.sessions: set[int] = set()
        self.data_watches: set[tuple[int, str]] = set()
        self.child_watches: set[tuple[int, str]] = set()
        self.pending: list[Notification] = []
        self._snap: tuple | None = None
        self._nodes_t: tuple = ()  # the encoded, sorted nodes as of ``_dirty`` being empty
        self._pending_enc: tuple = ((), ())  # (pending as a tuple, its encoding) last seen
        self._dirty: set[str] = {"/"}  # paths changed since ``_nodes_t`` was built
        self._base: _Base | None = None  # the restored snapshot, decoded

    # ------------------------------------------------------------ snapshot

    def snapshot(self) -> tuple:
        """Builtins only, canonical; cached until the next change."""
        snap = self._snap
        if snap is None:
            base = self._base
            old = base.snap if base is not None else ()
            sessions, dw, cw = self.sessions, self.data_watches, self.child_watches
            snap = self._snap = shared((  # type: ignore[assignment]
                self._encoded_nodes(),
                self.zxid,
                self.next_session,
                old[3] if base is not None and sessions == base.sessions
                else tuple(sorted(sessions)),
                old[4] if base is not None and dw == base.data_watches else tuple(sorted(dw)),
                old[5] if base is not None and cw == base.child_watches else tuple(sorted(cw)),
                self._encoded_pending(),
            ))
        return snap

    def _encoded_nodes(self) -> tuple:
        """``tuple(sorted((path, encode(node))))``, updated from the previous one for the
        paths changed since (a step changes a few of a few dozen znodes)."""
        dirty = self._dirty
        if not dirty:
            return self._nodes_t
        items = list(self._nodes_t)
        nodes = self.nodes
        encode = self.codec.encode
        for path in dirty:
            i = bisect_left(items, (path,))
            present = i < len(items) and items[i][0] == path
            node = nodes.get(path)
            if node is None:
                if present:
                    del items[i]
            elif present:
                items[i] = (path, encode(node))
            else:
                items.insert(i, (path, encode(node)))
        dirty.clear()
        self._nodes_t = out = tuple(items)
        return out

    def _encoded_pending(self) -> tuple:
        pend = tuple(self.pending)
        last, enc = self._pending_enc
        if pend != last:
            enc = self.codec.encode(pend)
            self._pending_enc = (pend, enc)
        return enc

    def touched(self, path: str) -> None:
        """``nodes[path]`` was changed directly (tests): the next snapshot re-encodes it."""
        self._snap = None
        self._dirty.add(path)

    @classmethod
    def restore(cls, snap: tuple, codec: Codec = PLAIN) -> ZooKeeper:
        zk = cls.__new__(cls)
        zk.codec = codec
        base = zk._base = codec.derived(decode_base, snap)
        zk._nodes_t = snap[0]
        zk.zxid, zk.next_session = snap[1], snap[2]
        zk._dirty = set()
        zk.nodes = base.nodes.copy()
        zk.sessions = base.sessions.copy()
        zk.data_watches = base.data_watches.copy()
        zk.child_watches = base.child_watches.copy()
        zk.pending = list(base.pending)
        zk._pending_enc = (base.pending, snap[6])
        zk._snap = snap
        return zk

    # ------------------------------------------------------------ sessions

    def open_session(self) -> int:
        self._snap = None
        sid = self.next_session
        self.next_session += 1
        self.sessions.add(sid)
        return sid

    def alive(self, session: int) -> bool:
        return session in self.sessions

    def expire_session(self, session: int) -> list[str]:
        """Expire (or close) ``session``: delete its ephemerals (one transaction), drop its
        watches and undelivered notifications. Returns the deleted paths."""
        if session not in self.sessions:
            return []
        self._snap = None
        self.sessions.discard(session)
        self.data_watches = {w for w in self.data_watches if w[0] != session}
        self.child_watches = {w for w in self.child_watches if w[0] != session}
        self.pending = [n for n in self.pending if n.session != session]
        owned = sorted(p for p, n in self.nodes.items() if n.owner == session)
        if owned:
            self.zxid += 1
            for path in owned:
                self._delete(path, self.zxid)
        return owned

    def expire_sessions(self, sessions: tuple[int, ...]) -> list[str]:
        """``expire_session`` of each of ``sessions`` in turn (a process that dies loses
        both of its sessions in one step); the deleted paths of all."""
        deleted: list[str] = []
        for s in sessions:
            deleted += self.expire_session(s)
        return deleted

    # ------------------------------------------------------------ reads

    def get(self, path: str, watch: int | None = None) -> Znode | None:
        """``getData``/``exists``; ``watch`` registers a one-shot data watch for that
        session (an exists watch when the znode is absent: it fires on creation)."""
        if watch is not None:
            assert watch in self.sessions, f"watch from dead session {watch}"
            if (watch, path) not in self.data_watches:
                self._snap = None
                self.data_watches.add((watch, path))
        return self.nodes.get(path)

    def children(self, path: str, watch: int | None = None) -> tuple[str, ...]:
        """``getChildren`` (sorted); an absent znode has none (and takes no watch, as in
        ZooKeeper where getChildren on an absent path fails)."""
        node = self.nodes.get(path)
        if node is None:
            return ()
        if watch is not None:
            assert watch in self.sessions, f"watch from dead session {watch}"
            if (watch, path) not in self.child_watches:
                self._snap = None
                self.child_watches.add((watch, path))
        return node.children

    def data(self, path: str) -> object | None:
        node = self.nodes.get(path)
        return None if node is None else node.data

    def paths(self) -> list[str]:
        return sorted(self.nodes)

    # ------------------------------------------------------------ notifications

    def sessions_with_notifications(self) -> list[int]:
        return sorted({n.session for n in self.pending})

    def next_notification(self, session: int) -> Notification | None:
        for n in self.pending:
            if n.session == session:
                return n
        return None

    def pop_notification(self, session: int) -> Notification:
        for i, n in enumerate(self.pending):
            if n.session == session:
                self._snap = None
                del self.pending[i]
                return n
        raise KeyError(f"no notification pending for session {session}")

    def drop_watches(self, session: int, keep: tuple[str, ...] = ()) -> None:
        """The client forgets its watchers (a resigning controller unregisters its handlers):
        watches and undelivered notifications of ``session``, except on ``keep`` paths."""
        self._snap = None
        self.data_watches = {w for w in self.data_watches if w[0] != session or w[1] in keep}
        self.child_watches = {w for w in self.child_watches if w[0] != session or w[1] in keep}
        self.pending = [n for n in self.pending if n.session != session or n.path in keep]

    def connection_lost(self, session: int) -> tuple[str, ...]:
        """The client of ``session`` lost its connection (the session lives on): it forgets
        its watchers and calls each with a NONE event, as kazoo does on SUSPENDED
        (``KazooClient._reset_watchers``), so nothing more is notified to it until it reads
        (and watches) again. Returns the paths of those watchers: its undelivered
        notifications first (their watchers are still registered on the client's side), in
        order, then its child watches and its data watches, each sorted by path."""
        pend = [n.path for n in self.pending if n.session == session]
        child = sorted(p for s, p in self.child_watches if s == session)
        data = sorted(p for s, p in self.data_watches if s == session)
        if pend or child or data:
            self.drop_watches(session)
        return (*pend, *child, *data)

    def _fire(self, watches: set[tuple[int, str]], path: str, kind: str) -> None:
        hit = sorted(w for w in watches if w[1] == path)
        for w in hit:
            watches.discard(w)
            self.pending.append(_shared_note(Notification(w[0], path, kind)))

    # ------------------------------------------------------------ writes

    def multi(self, ops: tuple[ZkOp, ...] | list[ZkOp], session: int = 0) -> MultiResult:
        """Commit ``ops`` as one transaction, or nothing. ``session`` owns ephemerals and
        must be alive (0 = a client outside the model, e.g. an admin tool)."""
        if session and session not in self.sessions:
            return MultiResult(False, tuple(OpResult(SESSION_EXPIRED, _path(o)) for o in ops), 0)
        self._snap = None
        saved = (self.nodes.copy(), set(self.data_watches), set(self.child_watches),
                 len(self.pending))
        zxid = self.zxid + 1
        results: list[OpResult] = []
        failed = False
        for op in ops:
            code, path = self._apply(op, session, zxid)
            results.append(OpResult(code, path))
            if code != OK:
                failed = True
                break
        if failed:
            self.nodes, self.data_watches, self.child_watches, n = saved
            del self.pending[n:]
            rolled = [OpResult(ROLLED_BACK, r.path) if r.code == OK else r for r in results]
            rolled += [OpResult(ROLLED_BACK, _path(o)) for o in ops[len(results):]]
            return MultiResult(False, tuple(rolled), 0)
        self.zxid = zxid
        return MultiResult(True, tuple(results), zxid)

    def create(self, path: str, data: object = EMPTY, *, session: int = 0,
               ephemeral: bool = False, sequential: bool = False,
               make_parents: bool = False) -> OpResult:
        r = self.multi((CreateOp(path, data, ephemeral, sequential, make_parents),), session)
        return r.results[0] if not r.ok else OpResult(OK, r.results[0].path)

    def set_data(self, path: str, data: object, version: int = -1) -> str:
        return self.multi((SetDataOp(path, data, version),)).results[0].code

    def delete(self, path: str, version: int = -1, recursive: bool = False) -> str:
        return self.multi((DeleteOp(path, version, recursive),)).results[0].code

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its parents (persistent, empty) if absent."""
        if path not in self.nodes:
            self.multi((CreateOp(path, EMPTY, make_parents=True),))

    # ------------------------------------------------------------ ops

    def _apply(self, op: ZkOp, session: int, zxid: int) -> tuple[str, str]:
        if isinstance(op, CheckOp):
            node = self.nodes.get(op.path)
            if node is None:
                return NO_NODE, op.path
            if op.version != -1 and node.version != op.version:
                return BAD_VERSION, op.path
            return OK, op.path
        if isinstance(op, SetDataOp):
            node = self.nodes.get(op.path)
            if node is None:
                return NO_NODE, op.path
            if op.version != -1 and node.version != op.version:
                return BAD_VERSION, op.path
            self.nodes[op.path] = node._replace(data=op.data, version=node.version + 1,
                                                mzxid=zxid)
            self._dirty.add(op.path)
            self._fire(self.data_watches, op.path, CHANGED)
            return OK, op.path
        if isinstance(op, DeleteOp):
            node = self.nodes.get(op.path)
            if node is None:
                return NO_NODE, op.path
            if op.version != -1 and node.version != op.version:
                return BAD_VERSION, op.path
            if node.children and not op.recursive:
                return NOT_EMPTY, op.path
            self._delete(op.path, zxid)
            return OK, op.path
        if isinstance(op, CreateOp):
            return self._create(op, session, zxid)
        raise TypeError(f"not a ZooKeeper op: {op!r}")

    def _create(self, op: CreateOp, session: int, zxid: int) -> tuple[str, str]:
        parent = parent_of(op.path)
        if parent not in self.nodes:
            if not op.make_parents:
                return NO_NODE, op.path
            # Kafka's createRecursive: make the missing parents, persistent and empty
            code, _ = self._create(CreateOp(parent, EMPTY, make_parents=True), 0, zxid)
            if code != OK:
                return code, op.path
        pnode = self.nodes[parent]
        if pnode.owner:
            return NO_CHILDREN_FOR_EPHEMERALS, op.path
        path = op.path + f"{pnode.cversion:010d}" if op.sequential else op.path
        if path in self.nodes:
            return NODE_EXISTS, path
        if op.ephemeral and not session:
            raise ValueError(f"ephemeral {path} needs a session")
        owner = session if op.ephemeral else 0
        self.nodes[path] = Znode(op.data, 0, 0, zxid, zxid, owner, ())
        name = name_of(path)
        self.nodes[parent] = pnode._replace(cversion=pnode.cversion + 1,
                                            children=tuple(sorted(pnode.children + (name,))))
        self._dirty.add(path)
        self._dirty.add(parent)
        self._fire(self.data_watches, path, CREATED)
        self._fire(self.child_watches, parent, CHILDREN)
        return OK, path

    def _delete(self, path: str, zxid: int) -> None:
        node = self.nodes[path]
        for child in node.children:
            self._delete(join(path, child), zxid)
        del self.nodes[path]
        parent = parent_of(path)
        pnode = self.nodes[parent]
        name = name_of(path)
        self.nodes[parent] = pnode._replace(
            cversion=pnode.cversion + 1, children=tuple(c for c in pnode.children if c != name))
        self._dirty.add(path)
        self._dirty.add(parent)
        self._fire(self.data_watches, path, DELETED)
        self._fire(self.child_watches, path, DELETED)
        self._fire(self.child_watches, parent, CHILDREN)


def _path(op: ZkOp) -> str:
    return op.path


def snapshot_has(snap: tuple, path: str) -> bool:
    """Whether the ZooKeeper snapshot ``snap`` holds a znode at ``path`` (no restore)."""
    nodes = snap[0]
    i = bisect_left(nodes, (path,))
    return i < len(nodes) and nodes[i][0] == path
