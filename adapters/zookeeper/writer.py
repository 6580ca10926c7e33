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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import CheckVersion, Create, Delete, SetData, Transaction
from kazoo.security import OPEN_ACL_UNSAFE

from adapters.zookeeper import codecs
from adapters.zookeeper.multi_read import JUTE_MAXBUFFER, children_many, read_many
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
_ACL_BYTES = 4 + sum(4 + 4 + len(a.id.scheme) + 4 + len(a.id.id) for a in OPEN_ACL_UNSAFE)
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


@dataclass(slots=True)
class _Planned:
    """One kazoo request of a write: its size, the op it comes from (index into the write's
    ops) and whether it was added by the writer (a parent create, a child delete)."""

    request: Any
    size: int
    origin: int
    synthetic: bool


def _request_size(req: Any) -> int:
    path_len = 4 + len(req.path.encode("utf-8"))
    if isinstance(req, Create):
        return MULTI_HEADER + path_len + 4 + len(req.data) + _ACL_BYTES + 4
    if isinstance(req, SetData):
        return MULTI_HEADER + path_len + 4 + len(req.data) + 4
    return MULTI_HEADER + path_len + 4  # Delete, CheckVersion


_STATE_MEMO: dict[LeaderAndIsr, bytes] = {}
_STATE_MEMO_MAX = 100_000


def _encode(path: str, value: object, sequential: bool) -> bytes:
    """The codecs' bytes for ``value`` at ``path``. Partition states are memoised by value (their
    bytes do not depend on the path; a failover writes many equal values): the path is checked
    with the cheap ``zk_paths.parse_partition_state`` and the codec runs on a miss."""
    if type(value) is LeaderAndIsr and zk_paths.parse_partition_state(path) is not None:
        data = _STATE_MEMO.get(value)
        if data is None:
            data = codecs.encode(path, value)
            if len(_STATE_MEMO) >= _STATE_MEMO_MAX:
                _STATE_MEMO.clear()
            _STATE_MEMO[value] = data
        return data
    # A sequential create names a prefix; the codec classifies the full (suffixed) name.
    return codecs.encode(path + "0000000000" if sequential else path, value)


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

    # ------------------------------------------------------------------ public

    def execute(self, write: ZkWrite) -> WriteResult:
        """Commit ``write``; the answer the controller must get before any other event."""
        try:
            if write.fence_version is None:
                return self._unfenced(write)
            return self._fenced(write)
        except (WriteAborted, KazooException, KazooTimeoutError) as exc:
            log.warning("write #%d aborted (%s: %s): reported fenced", write.token,
                        type(exc).__name__, exc)
            return WriteResult(write.token, fenced=True)

    def execute_unfenced_ops(self, ops: Sequence[ZkOp]) -> tuple[list[WriteFailure], list[str]]:
        """A broker's own writes (``BrokerZkWrite``): each op in its own ``multi`` (pipelined),
        no epoch fence. Returns the failures and, per op, the path created (sequential names
        resolved) or the op's path. Raises ``WriteAborted`` on connection loss."""
        planned, bad = self._plan(ops)
        groups: dict[int, list[_Planned]] = {}
        for p in planned:
            groups.setdefault(p.origin, []).append(p)
        batches = [groups[i] for i in sorted(groups)]
        results = self._run_batches(None, batches, stop_on_fence=False)
        created = [op.path for op in ops]
        culprits: list[tuple[int, str]] = list(bad)
        for batch, res in zip(batches, results, strict=True):
            for p, r in zip(batch, res, strict=True):
                if isinstance(r, KazooException):
                    if not isinstance(r, _INNOCENT) and not self._ignorable(p, r):
                        culprits.append((p.origin, error_code(r)))
                elif isinstance(r, str) and not p.synthetic:
                    created[p.origin] = self.client.unchroot(r)
        return self._describe(ops, sorted(culprits)), created

    # ------------------------------------------------------------------ planning

    def _plan(self, ops: Sequence[ZkOp]) -> tuple[list[_Planned], list[tuple[int, str]]]:
        """The kazoo requests for ``ops``, and the ops that cannot be encoded (a bug in
        whoever decided them: reported as failures with code ``EncodeError``, never sent)."""
        chroot = self.client.chroot
        out: list[_Planned] = []
        bad: list[tuple[int, str]] = []
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
        for i, op in enumerate(ops):
            try:
                data = b"" if not isinstance(op, CreateOp | SetDataOp) else \
                    _encode(op.path, op.data, isinstance(op, CreateOp) and op.sequential)
            except codecs.ZnodeEncodeError as exc:
                log.error("cannot encode %s: %s (op not sent)", op.path, exc)
                bad.append((i, "EncodeError"))
                continue
            if isinstance(op, CreateOp):
                if op.make_parents:
                    for parent in _parents(op.path):
                        if parent not in existing:
                            existing.add(parent)
                            req = Create(_prefix_root(chroot, parent), b"", OPEN_ACL_UNSAFE, 0)
                            out.append(_Planned(req, _request_size(req), i, True))
                flags = (1 if op.ephemeral else 0) | (2 if op.sequential else 0)
                req = Create(_prefix_root(chroot, op.path), data, OPEN_ACL_UNSAFE, flags)
            elif isinstance(op, SetDataOp):
                req = SetData(_prefix_root(chroot, op.path), data, op.version)
            elif isinstance(op, DeleteOp):
                if op.recursive:
                    for child in subtrees.get(op.path, ()):
                        req = Delete(_prefix_root(chroot, child), -1)
                        out.append(_Planned(req, _request_size(req), i, True))
                req = Delete(_prefix_root(chroot, op.path), op.version)
            elif isinstance(op, CheckOp):
                req = CheckVersion(_prefix_root(chroot, op.path), op.version)
            else:
                raise TypeError(f"not a ZooKeeper op: {op!r}")
            out.append(_Planned(req, _request_size(req), i, False))
        return out, bad

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

    def _cut(self, planned: list[_Planned], fence: CheckVersion | None
             ) -> tuple[list[list[_Planned]], list[_Planned]]:
        """Size-bounded batches; also the ops too large for any batch (never sent)."""
        base = FRAME_OVERHEAD + MULTI_HEADER + (_request_size(fence) if fence else 0)
        batches: list[list[_Planned]] = []
        too_big: list[_Planned] = []
        cur: list[_Planned] = []
        size = base
        for p in planned:
            if base + p.size > self.max_request_bytes:
                too_big.append(p)
                continue
            if cur and (size + p.size > self.max_request_bytes or len(cur) >= self.max_batch_ops):
                batches.append(cur)
                cur, size = [], base
            cur.append(p)
            size += p.size
        if cur:
            batches.append(cur)
        return batches, too_big

    # ------------------------------------------------------------------ running

    def _fence(self, version: int) -> CheckVersion:
        return CheckVersion(_prefix_root(self.client.chroot, zk_paths.CONTROLLER_EPOCH), version)

    def _run_batches(self, fence: CheckVersion | None, batches: list[list[_Planned]],
                     stop_on_fence: bool = True) -> list[list[Any]] | None:
        """Send the batches pipelined; per batch, the per-op results (the fence's own result
        removed). None if the fence check failed. Raises WriteAborted on a whole-batch error."""
        client = self.client
        out: list[list[Any]] = []
        pending: deque[Any] = deque()
        fenced = False

        def collect() -> None:
            nonlocal fenced
            try:
                res = pending.popleft().get(timeout=self.timeout)
            except KazooTimeoutError as exc:
                raise WriteAborted(f"no answer within {self.timeout:g} s") from exc
            except KazooException as exc:
                raise WriteAborted(f"{type(exc).__name__}") from exc
            if fence is not None:
                head, res = res[0], res[1:]
                if isinstance(head, KazooException) and not isinstance(head, _INNOCENT):
                    fenced = True
            out.append(res)

        for batch in batches:
            if fenced and stop_on_fence:
                break
            ops = [fence] if fence is not None else []
            ops.extend(p.request for p in batch)
            result = client.handler.async_result()
            client._call(Transaction(ops), result)
            self.batches_sent += 1
            pending.append(result)
            if len(pending) >= self.max_in_flight:
                collect()
        while pending:
            collect()
        return None if fenced else out

    def _fenced(self, write: ZkWrite) -> WriteResult:
        fence = self._fence(write.fence_version)  # type: ignore[arg-type]
        planned, bad = self._plan(write.ops)
        batches, too_big = self._cut(planned, fence)
        culprits = bad + [(p.origin, "RequestTooLarge") for p in too_big]
        failed_origins = {o for o, _ in culprits}
        for attempt in range(3):  # 0: batches, 1: innocents re-run once, 2: one op per multi
            results = self._run_batches(fence, batches)
            if results is None:
                return WriteResult(write.token, fenced=True)
            rerun: list[_Planned] = []
            for batch, res in zip(batches, results, strict=True):
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
                batches, _ = self._cut(rerun, fence)
            else:
                batches = [[p] for p in rerun]
        failures = self._describe(write.ops, sorted(culprits))
        return WriteResult(write.token, failures=tuple(failures))

    def _unfenced(self, write: ZkWrite) -> WriteResult:
        planned, bad = self._plan(write.ops)
        if bad:
            return WriteResult(write.token, failures=tuple(self._describe(write.ops, bad)))
        results = self._run_batches(None, [planned])
        assert results is not None
        culprits = [(p.origin, error_code(r)) for p, r in zip(planned, results[0], strict=True)
                    if isinstance(r, KazooException) and not isinstance(r, _INNOCENT)
                    and not self._ignorable(p, r)]
        return WriteResult(write.token, failures=tuple(self._describe(write.ops, culprits)))

    @staticmethod
    def _ignorable(p: _Planned, exc: KazooException) -> bool:
        """A synthetic op that found the work done: a parent that exists, a child already gone."""
        if not p.synthetic:
            return False
        if isinstance(p.request, Create):
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
                    value = codecs.decode(path, data)
                except (codecs.ZnodeDecodeError, ValueError) as exc:
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
    "error_code",
]
