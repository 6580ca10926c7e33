"""Execute a controller ``ZkWrite`` (and a broker's ``BrokerZkWrite``) as kazoo ``multi``
transactions against a real ensemble, and map what happened onto ``WriteResult``.

Protocol (``docs/core-contract.md`` "The write protocol"; the simulated world's
``model_check.world.executor.commit`` is the reference semantics):

* Fenced writes (``fence_version`` set): the ops are cut into batches, each one ``multi`` that
  begins with ``check("/controller_epoch", fence_version)``. Batches are cut by the exact size of
  the request packet (paths with the chroot, encoded data, ACLs, multi headers) so that no packet
  exceeds ``max_request_bytes`` (default ``jute.maxbuffer`` = 1 MiB - 1 less a 64 KiB margin): a
  server *drops the connection* on an oversized request rather than answering an error. Up to
  ``max_in_flight`` batches are pipelined on the session (``commit_async``); one session is FIFO,
  so batches apply in order.
* The election's own transaction (``fence_version`` None) is one ``multi`` as it is: no check, no
  cutting, no re-run (its ops only make sense together).
* ``CreateOp(make_parents=True)``: the missing parents (empty data) are created first, in the
  same batch as (or a batch before) the child; parents that exist are skipped (one bulk
  existence read per write); a parent that appears meanwhile (NodeExists on our synthetic create)
  is not a failure.
* ``DeleteOp(recursive=True)``: the subtree is listed (level by level, bulk ``getChildren``) and
  deleted children first, then the znode itself with the op's version.

Failures:

* a failed epoch check (BadVersion/NoNode on ``/controller_epoch``) -> ``WriteResult(fenced=True)``;
  nothing more is sent, never retried (batches already in flight fail their check too).
* a failed op in a batch: ZooKeeper rolls the whole batch back and answers per op (the culprit's
  own error; ``RolledBackError`` before it, ``RuntimeInconsistency`` after it). The culprits are
  reported as ``WriteFailure(path, code, current, current_version)`` with the znode's current
  value and version re-read (decoded with the codecs; ``None`` when absent or undecodable); the
  rolled-back innocent ops of that batch are re-run once in new fenced batches. Should a re-run
  batch fail again, its innocents run one op per ``multi`` (still fenced), as the world commits
  them, so each op is decided on its own.
* connection loss, session expiry or a timeout while a write is in flight -> ``fenced=True``.
  The outcome of a ``multi`` in flight when the connection dropped is unknown, and the contract
  has no "unknown" answer: fenced makes the controller resign and discard its state; the runtime
  then gives up ``/controller`` if its session still owns it (Kafka's ``triggerControllerMove``),
  and whoever is elected next (perhaps this candidate again, with epoch + 1) reloads everything
  from ZooKeeper, so an unknown outcome is resolved by re-reading, never by guessing. Batches
  queued in kazoo during the outage may still be sent after reconnecting; they stay fenced by
  the old epoch version, and the next election bumps it after them (same session FIFO), so the
  next controller's load sees them. (kazoo fails every request in flight or queued at the
  moment of the drop with ConnectionLoss; only requests made while it reconnects wait.)
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    EXCEPTIONS,
    BadVersionError,
    ConnectionClosedError,
    ConnectionDropped,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    OperationTimeoutError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.serialization import (
    CheckVersion,
    Create,
    Delete,
    SetData,
    Transaction,
    int_struct,
    multiheader_struct,
    read_string,
    stat_struct,
    write_string,
)
from kazoo.protocol.states import ZnodeStat
from kazoo.security import OPEN_ACL_UNSAFE

from adapters.zookeeper import codec
from adapters.zookeeper.codec.encoders import encode_partition_state
from adapters.zookeeper.codec.fields import INT32_MAX, legal_topic
from adapters.zookeeper.multi_read import JUTE_MAXBUFFER, children_many, full_path, read_many
from fsm import zk_paths
from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkOp, ZkWrite
from fsm.events import WriteFailure, WriteResult
from fsm.values import LeaderAndIsr

log = logging.getLogger("kcontrol.zk.writer")

DEFAULT_MAX_REQUEST_BYTES = JUTE_MAXBUFFER - 64 * 1024
DEFAULT_MAX_IN_FLIGHT = 8
DEFAULT_MAX_BATCH_OPS = 1000
"""Smaller batches pipeline better (measured: 10,000 sets take 0.31 s in batches of 500-1000,
0.39 s in batches of 5,000, on a loaded machine)."""
FRAME_OVERHEAD = 4 + 4 + 4  # length prefix, xid, opcode
MULTI_HEADER = 9  # type:int done:bool err:int
_INNOCENT = (RolledBackError, RuntimeInconsistency)

CODES: dict[type, str] = {
    BadVersionError: "BadVersion",
    NoNodeError: "NoNode",
    NodeExistsError: "NodeExists",
    NotEmptyError: "NotEmpty",
}


def error_code(exc: BaseException) -> str:
    """ZooKeeper's name for a per-op error (``BadVersion``, ``NoNode``, ...)."""
    for cls, name in CODES.items():
        if isinstance(exc, cls):
            return name
    name = type(exc).__name__
    return name[:-5] if name.endswith("Error") else name


class WriteAborted(Exception):
    """A batch failed as a whole: connection loss, session expiry, timeout (not a per-op error)."""


def abort_reason(exc: BaseException, token: int) -> str:
    """Why a write that could not finish is reported fenced, in words: the session expired, or
    the connection was lost (or went silent) with the outcome unknown."""
    cause = exc.__cause__ if isinstance(exc, WriteAborted) and exc.__cause__ else exc
    if isinstance(cause, SessionExpiredError):
        return f"ZooKeeper session expired while write #{token} was in flight"
    if isinstance(cause, KazooTimeoutError | OperationTimeoutError):
        return (f"no answer to write #{token} in time: connection presumed lost, outcome "
                "unknown")
    if isinstance(cause, ConnectionLoss | ConnectionClosedError | ConnectionDropped):
        return f"connection to ZooKeeper lost while write #{token} was in flight: outcome unknown"
    return f"write #{token} aborted ({type(cause).__name__}): outcome unknown"


@dataclass(slots=True)
class _Planned:
    """One op of a ``multi`` as it goes on the wire (its multi header and the request, the same
    bytes as kazoo's ``MultiHeader(...).serialize() + op.serialize()``), the op it comes from
    (index into the write's ops) and whether it was added by the writer (a parent create, a
    child delete)."""

    kind: int  # the ZooKeeper opcode: CREATE, DELETE, SET_DATA, CHECK
    payload: bytes
    origin: int
    synthetic: bool


CREATE, DELETE, SET_DATA, CHECK = Create.type, Delete.type, SetData.type, CheckVersion.type
_HEAD = {kind: multiheader_struct.pack(kind, False, -1) for kind in (CREATE, DELETE, SET_DATA, CHECK)}
_END = multiheader_struct.pack(-1, True, -1)
_INT = int_struct.pack
_OPEN_ACL = _INT(len(OPEN_ACL_UNSAFE)) + b"".join(
    _INT(a.perms) + write_string(a.id.scheme) + write_string(a.id.id) for a in OPEN_ACL_UNSAFE)
"""The ACL list ``OPEN_ACL_UNSAFE`` (count, then each ACL) as a create carries it."""


def _acl_wire(acl: Sequence[Any]) -> bytes:
    """An ACL list as a create carries it: the client's ``default_acl`` when it has one (with
    ``--zookeeper-auth``: world READ, ALL for kcontrol's identity), else the open ACL."""
    if not acl:
        return _OPEN_ACL
    return _INT(len(acl)) + b"".join(
        _INT(a.perms) + write_string(a.id.scheme) + write_string(a.id.id) for a in acl)
_OPS = frozenset({CreateOp, SetDataOp, DeleteOp, CheckOp})


def _payload(kind: int, path: str, data: bytes = b"", version: int = -1, flags: int = 0,
             acl: bytes = _OPEN_ACL) -> bytes:
    """The multi header and request of one op, as kazoo serializes it (``path`` chrooted)."""
    p = path.encode("utf-8")
    if kind == SET_DATA:
        return b"".join((_HEAD[SET_DATA], _INT(len(p)), p, _INT(len(data)), data, _INT(version)))
    if kind == CREATE:
        return b"".join((_HEAD[CREATE], _INT(len(p)), p, _INT(len(data)), data, acl,
                         _INT(flags)))
    return b"".join((_HEAD[kind], _INT(len(p)), p, _INT(version)))  # DELETE, CHECK


class _Multi(tuple):
    """A ``multi`` request (opcode 14) of ops already serialized: the request object kazoo's
    connection sends (``type``, ``serialize``) and whose reply it hands to ``deserialize``. Its
    results are those of kazoo's ``Transaction`` (a created path, ``True``, a ``ZnodeStat``, or
    the op's exception), and kazoo strips the chroot from created paths for any request of type
    14, as for its own transactions."""

    __slots__ = ()
    type = Transaction.type

    def serialize(self) -> bytes:
        return b"".join(self) + _END

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        header, length = multiheader_struct.unpack_from, int_struct.unpack_from
        stat_of, make_stat, stat_size = stat_struct.unpack_from, ZnodeStat._make, stat_struct.size
        results: list[Any] = []
        append = results.append
        while True:
            kind, done, _ = header(buf, offset)
            offset += 9
            if done:
                return results
            if kind == SET_DATA:
                append(make_stat(stat_of(buf, offset)))
                offset += stat_size
            elif kind == CREATE:
                path, offset = read_string(buf, offset)
                append(path)
            elif kind in (DELETE, CHECK):
                append(True)
            elif kind == -1:
                append(EXCEPTIONS[length(buf, offset)[0]]())
                offset += 4
            else:
                raise ValueError(f"multi reply: unexpected result type {kind}")


_STATE_PREFIX, _STATE_SUFFIX = zk_paths.TOPICS + "/", "/state"
_LEGAL_TOPICS: dict[str, bool] = {}  # topic name -> legal_topic(name), bounded


def _is_state_path(path: str) -> bool:
    """``path`` is a partition state znode of Kafka's layout: what ``codec.paths.classify`` says
    (a legal topic name, a partition id without leading zeros within int32), without its
    regular expressions, and each topic's name checked once."""
    if not (path.startswith(_STATE_PREFIX) and path.endswith(_STATE_SUFFIX)):
        return False
    topic, sep, num = path[len(_STATE_PREFIX):-len(_STATE_SUFFIX)].partition("/partitions/")
    if not (sep and num.isascii() and num.isdigit() and len(num) <= 10) \
            or (num[0] == "0" and num != "0") or int(num) > INT32_MAX:
        return False
    legal = _LEGAL_TOPICS.get(topic)
    if legal is None:
        if len(_LEGAL_TOPICS) >= 100_000:
            _LEGAL_TOPICS.clear()
        legal = _LEGAL_TOPICS[topic] = legal_topic(topic)
    return legal


def _encode(path: str, value: object, sequential: bool) -> bytes:
    """The codecs' bytes for ``value`` at ``path``. Partition states (most of what a controller
    writes) go straight to their encoder after a cheap check of the path."""
    if type(value) is LeaderAndIsr and _is_state_path(path):
        return encode_partition_state(path, value)
    # A sequential create names a prefix; the codec classifies the full (suffixed) name.
    return codec.encode(path + "0000000000" if sequential else path, value)


def _parents(path: str) -> list[str]:
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts))]


class ZkWriter:
    """Commits ``ZkWrite``s through one kazoo client. Not thread-safe: one event thread uses it."""

    def __init__(
        self,
        client: KazooClient,
        *,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_batch_ops: int = DEFAULT_MAX_BATCH_OPS,
        timeout: float | None = None,
    ) -> None:
        self.client = client
        self.max_request_bytes = max_request_bytes
        self.max_in_flight = max(1, max_in_flight)
        self.max_batch_ops = max(1, max_batch_ops)
        self.timeout = timeout if timeout is not None else max(
            client._session_timeout / 1000.0 * 2, 10.0)
        self.batches_sent = 0  # statistics (tests, benchmarks)
        self.fence_reason: str | None = None
        """Why the last ``execute`` answered ``fenced`` (None when it did not)."""

    # ------------------------------------------------------------------ public

    def execute(self, write: ZkWrite) -> WriteResult:
        """Commit ``write``; the answer the controller must get before any other event. When
        the answer is ``fenced``, ``fence_reason`` says why (the check failed, or the write
        could not finish: connection lost, session expired)."""
        self.fence_reason = None
        try:
            result = self._unfenced(write) if write.fence_version is None else self._fenced(write)
        except (WriteAborted, KazooException, KazooTimeoutError) as exc:
            self.fence_reason = abort_reason(exc, write.token)
            log.warning("write #%d aborted (%s: %s): reported fenced (%s)", write.token,
                        type(exc).__name__, exc, self.fence_reason)
            return WriteResult(write.token, fenced=True)
        if result.fenced:
            self.fence_reason = (f"fenced: write #{write.token}'s check of "
                                 f"{zk_paths.CONTROLLER_EPOCH} failed (another controller was "
                                 "elected)")
        return result

    def execute_unfenced_ops(self, ops: Sequence[ZkOp]) -> tuple[list[WriteFailure], list[str]]:
        """A broker's own writes (``BrokerZkWrite``): each op in its own ``multi`` (pipelined),
        no epoch fence. Returns the failures and, per op, the path created (sequential names
        resolved) or the op's path. Raises ``WriteAborted`` on connection loss."""
        bad: list[tuple[int, str]] = []
        groups: dict[int, list[_Planned]] = {}
        for p in self._plan(ops, bad):
            groups.setdefault(p.origin, []).append(p)
        sent = self._run_batches(None, [groups[i] for i in sorted(groups)], stop_on_fence=False)
        assert sent is not None
        created = [op.path for op in ops]
        culprits: list[tuple[int, str]] = list(bad)
        for batch, res in sent:
            for p, r in zip(batch, res, strict=True):
                if isinstance(r, KazooException):
                    if not isinstance(r, _INNOCENT) and not self._ignorable(p, r):
                        culprits.append((p.origin, error_code(r)))
                elif isinstance(r, str) and not p.synthetic:
                    created[p.origin] = self.client.unchroot(r)
        return self._describe(ops, sorted(culprits)), created

    # ------------------------------------------------------------------ planning

    def _plan(self, ops: Sequence[ZkOp], bad: list[tuple[int, str]]) -> Iterator[_Planned]:
        """The wire form of ``ops``, op by op (a generator: the first batches are sent while the
        later ops are still being encoded). Ops that cannot be encoded (a bug in whoever decided
        them) are appended to ``bad`` with code ``EncodeError``, never sent. The reads the plan
        needs (existing parents, subtrees to delete) are made before the first op is yielded."""
        if strays := [op for op in ops if type(op) not in _OPS]:
            raise TypeError(f"not a ZooKeeper op: {strays[0]!r}")  # before anything is sent
        chroot = self.client.chroot
        # parents of make_parents creates: one bulk existence read for all of them
        wanted: list[str] = []
        for op in ops:
            if isinstance(op, CreateOp) and op.make_parents:
                wanted.extend(_parents(op.path))
        existing: set[str] = set()
        if wanted:
            got = read_many(self.client, dict.fromkeys(wanted), timeout=self.timeout)
            existing = {p for p, r in got.items() if not isinstance(r, KazooException)}
        subtrees = self._subtrees([op.path for op in ops
                                   if isinstance(op, DeleteOp) and op.recursive])
        return self._plan_ops(ops, bad, chroot, existing, subtrees,
                              _acl_wire(self.client.default_acl))

    @staticmethod
    def _plan_ops(ops: Sequence[ZkOp], bad: list[tuple[int, str]], chroot: str,
                  existing: set[str], subtrees: dict[str, list[str]],
                  acl: bytes = _OPEN_ACL) -> Iterator[_Planned]:
        for i, op in enumerate(ops):
            cls = type(op)
            if cls is SetDataOp:  # the common case first
                try:
                    data = _encode(op.path, op.data, False)
                except codec.ZnodeEncodeError as exc:
                    log.error("cannot encode %s: %s (op not sent)", op.path, exc)
                    bad.append((i, "EncodeError"))
                    continue
                yield _Planned(SET_DATA, _payload(SET_DATA, full_path(chroot, op.path), data,
                                                  op.version), i, False)
            elif cls is CreateOp:
                try:
                    data = _encode(op.path, op.data, op.sequential)
                except codec.ZnodeEncodeError as exc:
                    log.error("cannot encode %s: %s (op not sent)", op.path, exc)
                    bad.append((i, "EncodeError"))
                    continue
                if op.make_parents:
                    for parent in _parents(op.path):
                        if parent not in existing:
                            existing.add(parent)
                            yield _Planned(CREATE, _payload(CREATE, full_path(chroot, parent),
                                                            acl=acl), i, True)
                flags = (1 if op.ephemeral else 0) | (2 if op.sequential else 0)
                yield _Planned(CREATE, _payload(CREATE, full_path(chroot, op.path), data,
                                                flags=flags, acl=acl), i, False)
            elif cls is DeleteOp:
                if op.recursive:
                    for child in subtrees.get(op.path, ()):
                        yield _Planned(DELETE, _payload(DELETE, full_path(chroot, child)), i,
                                       True)
                yield _Planned(DELETE, _payload(DELETE, full_path(chroot, op.path),
                                                version=op.version), i, False)
            elif cls is CheckOp:
                yield _Planned(CHECK, _payload(CHECK, full_path(chroot, op.path),
                                               version=op.version), i, False)
            else:
                raise TypeError(f"not a ZooKeeper op: {op!r}")

    def _subtrees(self, roots: list[str]) -> dict[str, list[str]]:
        """For each root, its descendants deepest first (children before their parents)."""
        out: dict[str, list[str]] = {}
        for root in roots:
            levels: list[list[str]] = []
            level = [root]
            while level:
                got = children_many(self.client, level, timeout=self.timeout)
                nxt = []
                for parent in level:
                    kids = got.get(parent)
                    if isinstance(kids, list):
                        base = "" if parent == "/" else parent
                        nxt.extend(f"{base}/{k}" for k in sorted(kids))
                if nxt:
                    levels.append(nxt)
                level = nxt
            out[root] = [p for lvl in reversed(levels) for p in lvl]
        return out

    def _cut(self, planned: Iterable[_Planned], fence: bytes | None,
             too_big: list[_Planned]) -> Iterator[list[_Planned]]:
        """Size-bounded batches, yielded as soon as each is full; the ops too large for any
        batch (never sent) are appended to ``too_big``."""
        base = FRAME_OVERHEAD + MULTI_HEADER + (len(fence) if fence else 0)
        limit, max_ops = self.max_request_bytes, self.max_batch_ops
        cur: list[_Planned] = []
        size = base
        for p in planned:
            n = len(p.payload)
            if base + n > limit:
                too_big.append(p)
                continue
            if cur and (size + n > limit or len(cur) >= max_ops):
                yield cur
                cur, size = [], base
            cur.append(p)
            size += n
        if cur:
            yield cur

    # ------------------------------------------------------------------ running

    def _fence(self, version: int) -> bytes:
        return _payload(CHECK, full_path(self.client.chroot, zk_paths.CONTROLLER_EPOCH),
                        version=version)

    def _run_batches(self, fence: bytes | None, batches: Iterable[list[_Planned]],
                     stop_on_fence: bool = True) -> list[tuple[list[_Planned], list[Any]]] | None:
        """Send the batches pipelined (each as soon as it is cut); per batch sent, the batch and
        its per-op results (the fence's own result removed). None if the fence check failed.
        Raises WriteAborted on a whole-batch error."""
        client = self.client
        out: list[tuple[list[_Planned], list[Any]]] = []
        pending: deque[tuple[list[_Planned], Any]] = deque()
        fenced = False

        def collect() -> None:
            nonlocal fenced
            batch, result = pending.popleft()
            try:
                res = result.get(timeout=self.timeout)
            except KazooTimeoutError as exc:
                raise WriteAborted(f"no answer within {self.timeout:g} s") from exc
            except KazooException as exc:
                raise WriteAborted(f"{type(exc).__name__}") from exc
            if fence is not None:
                head, res = res[0], res[1:]
                if isinstance(head, KazooException) and not isinstance(head, _INNOCENT):
                    fenced = True
            out.append((batch, res))

        for batch in batches:
            if fenced and stop_on_fence:
                break
            request = _Multi(([fence] if fence is not None else []) + [p.payload for p in batch])
            result = client.handler.async_result()
            client._call(request, result)
            self.batches_sent += 1
            pending.append((batch, result))
            if len(pending) >= self.max_in_flight:
                collect()
        while pending:
            collect()
        return None if fenced else out

    def _fenced(self, write: ZkWrite) -> WriteResult:
        fence = self._fence(write.fence_version)  # type: ignore[arg-type]
        bad: list[tuple[int, str]] = []
        too_big: list[_Planned] = []
        batches: Iterable[list[_Planned]] = self._cut(self._plan(write.ops, bad), fence, too_big)
        culprits: list[tuple[int, str]] = []
        failed_origins: set[int] = set()
        for attempt in range(3):  # 0: batches, 1: innocents re-run once, 2: one op per multi
            sent = self._run_batches(fence, batches)
            if attempt == 0:  # the plan has run to its end: its own failures are known
                culprits = bad + [(p.origin, "RequestTooLarge") for p in too_big]
                failed_origins = {o for o, _ in culprits}
            if sent is None:
                return WriteResult(write.token, fenced=True)
            rerun: list[_Planned] = []
            for batch, res in sent:
                if not any(isinstance(r, KazooException) for r in res):
                    continue
                for p, r in zip(batch, res, strict=True):
                    if isinstance(r, _INNOCENT):
                        rerun.append(p)
                    elif isinstance(r, KazooException):
                        if self._ignorable(p, r):
                            continue
                        if p.origin not in failed_origins:
                            failed_origins.add(p.origin)
                            culprits.append((p.origin, error_code(r)))
            # an innocent whose origin op already failed (a child delete of a failed
            # recursive delete) is not re-run
            rerun = [p for p in rerun if p.origin not in failed_origins]
            if not rerun:
                break
            if attempt == 0:
                log.info("write #%d: %d op(s) failed, re-running %d rolled-back op(s)",
                         write.token, len(culprits), len(rerun))
                batches = list(self._cut(rerun, fence, []))
            else:
                batches = [[p] for p in rerun]
        failures = self._describe(write.ops, sorted(culprits))
        return WriteResult(write.token, failures=tuple(failures))

    def _unfenced(self, write: ZkWrite) -> WriteResult:
        bad: list[tuple[int, str]] = []
        planned = list(self._plan(write.ops, bad))
        if bad:
            return WriteResult(write.token, failures=tuple(self._describe(write.ops, bad)))
        sent = self._run_batches(None, [planned])
        assert sent is not None
        culprits = [(p.origin, error_code(r)) for p, r in zip(planned, sent[0][1], strict=True)
                    if isinstance(r, KazooException) and not isinstance(r, _INNOCENT)
                    and not self._ignorable(p, r)]
        return WriteResult(write.token, failures=tuple(self._describe(write.ops, culprits)))

    @staticmethod
    def _ignorable(p: _Planned, exc: KazooException) -> bool:
        """A synthetic op that found the work done: a parent that exists, a child already gone."""
        if not p.synthetic:
            return False
        if p.kind == CREATE:
            return isinstance(exc, NodeExistsError)
        return isinstance(exc, NoNodeError)

    def _describe(self, ops: Sequence[ZkOp], culprits: Iterable[tuple[int, str]]
                  ) -> list[WriteFailure]:
        """``WriteFailure``s with each culprit's current data and version (one bulk re-read)."""
        culprits = list(culprits)
        if not culprits:
            return []
        paths = [ops[i].path for i, _ in culprits]
        current = read_many(self.client, [p for p in paths if not _is_prefix(ops, p)],
                            timeout=self.timeout)
        out = []
        for i, code in culprits:
            path = ops[i].path
            got = current.get(path)
            value, version = None, -1
            if isinstance(got, tuple):
                data, stat = got
                version = stat.version
                try:
                    value = codec.decode(path, data)
                except (codec.ZnodeDecodeError, ValueError) as exc:
                    log.error("cannot decode the current data of %s: %s", path, exc)
            out.append(WriteFailure(path, code, value, version))
        return out


def _is_prefix(ops: Sequence[ZkOp], path: str) -> bool:
    """A sequential create's path is a prefix, not a znode: nothing to re-read."""
    return any(isinstance(o, CreateOp) and o.sequential and o.path == path for o in ops)


__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_REQUEST_BYTES",
    "WriteAborted",
    "ZkWriter",
    "abort_reason",
    "error_code",
]
