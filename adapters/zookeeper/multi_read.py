"""Bulk reads: ZooKeeper 3.6+'s ``multiRead`` (opcode 22) as a kazoo request type.

kazoo has no ``multiRead``. ``MultiRead`` below is a request object in kazoo's own shape (a
``type`` and ``serialize``/``deserialize``) sent with the client's internal
``_call(request, async_result)``; kazoo's connection thread frames it, and hands the reply body
to ``deserialize``. Unlike ``multi`` (opcode 14) a ``multiRead`` is not atomic and not
all-or-nothing: every sub-read answers on its own, a missing znode comes back as an error result
(``NoNodeError``) for that path only.

Wire format (ZooKeeper's ``MultiOperationRecord`` / ``MultiResponse``)::

    request  := { header(type=4|8, done=False, err=-1) path:ustring watch:bool }* header(-1, True, -1)
    response := { header(4, False, 0) data:buffer stat:Stat
                | header(8, False, 0) children:vector<ustring>
                | header(-1, False, err) err:int }* header(-1, True, -1)

Batch sizes. A server closes the connection on a request packet longer than its
``jute.maxbuffer`` (default 0xfffff bytes, 1 MiB - 1), so every batch's request size is computed
exactly and kept under ``max_batch_bytes``. The *response* size is unknown before reading (it is
the sum of the znodes' data), so it is bounded by count: a batch of ``n`` reads answers at most
``n * (RESPONSE_OVERHEAD + D)`` bytes for znodes of at most ``D`` bytes. With the default 1000
paths per batch that is under 1 MiB for znodes up to 900 bytes: partition states (~80 bytes),
broker registrations, notifications. For larger znodes (topic znodes of big topics) pass a smaller
``max_batch_paths`` -- or ``expected_znode_bytes``, which derives it. (ZooKeeper 3.8's server does
not refuse a large reply and kazoo reads replies of any length, so an underestimate costs memory,
not correctness; a Java client would refuse a reply over its own ``jute.maxbuffer``.)

Servers older than 3.6 answer opcode 22 with ``UNIMPLEMENTED`` and drop the connection;
``read_many`` probes once per client (``probe_multi_read``), then falls back to pipelined
``get_async`` and remembers that for the client (``supports_multi_read``).
"""

from __future__ import annotations

import struct
import threading
import weakref
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, repeat
from operator import add
from typing import Any, Literal, NamedTuple

from kazoo.client import CLOSED_STATES, KazooClient
from kazoo.exceptions import (
    EXCEPTIONS,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    UnimplementedError,
)
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import (
    GetChildren,
    GetData,
    int_struct,
    multiheader_struct,
    read_string,
    stat_struct,
)
from kazoo.protocol.states import KazooState, ZnodeStat

OPCODE = 22
JUTE_MAXBUFFER = 0xFFFFF
"""ZooKeeper's default ``jute.maxbuffer``: the longest packet a server (or Java client) accepts."""
FRAME_OVERHEAD = 4 + 4 + 4  # length prefix, xid, opcode
HEADER_BYTES = multiheader_struct.size  # type:int done:bool err:int = 9
REQUEST_PATH_OVERHEAD = HEADER_BYTES + 4 + 1  # header, path length, watch flag
RESPONSE_OVERHEAD = HEADER_BYTES + 4 + stat_struct.size  # header, data length, stat = 81
RESPONSE_FRAME_OVERHEAD = 4 + 16 + HEADER_BYTES  # length prefix, reply header, closing header
DEFAULT_MAX_BATCH_BYTES = JUTE_MAXBUFFER - 64 * 1024  # a margin below the server's limit
DEFAULT_MAX_BATCH_PATHS = 1000
DEFAULT_MAX_IN_FLIGHT = 8

GET_DATA = GetData.type  # 4
GET_CHILDREN = GetChildren.type  # 8

DataResult = tuple[bytes, ZnodeStat] | KazooException
ChildrenResult = list[str] | KazooException
Mode = Literal["auto", "multi_read", "get_async"]

_support: weakref.WeakKeyDictionary[KazooClient, bool] = weakref.WeakKeyDictionary()


class MultiRead(NamedTuple):
    """One ``multiRead`` request: the same read (``GET_DATA`` or ``GET_CHILDREN``) of every path,
    paths already chroot-prefixed."""

    op_type: int
    paths: Sequence[str]
    type = OPCODE

    def serialize(self) -> bytes:
        return _serialize(self.op_type, self.paths)

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        # runs on kazoo's connection thread for every reply: the struct methods are bound once
        # and the common result (getData's data + stat) is read inline
        header, length = multiheader_struct.unpack_from, int_struct.unpack_from
        stat_of, make_stat = stat_struct.unpack_from, ZnodeStat._make
        stat_size = stat_struct.size
        results: list[Any] = []
        append = results.append
        while True:
            op_type, done, err = header(buf, offset)
            offset += HEADER_BYTES
            if done:
                return results
            if op_type == GET_DATA:
                n = length(buf, offset)[0]
                offset += 4
                if n < 0:
                    data = b""
                else:
                    data = buf[offset : offset + n]
                    offset += n
                append((bytes(data), make_stat(stat_of(buf, offset))))
                offset += stat_size
            elif op_type == GET_CHILDREN:
                count = length(buf, offset)[0]
                offset += int_struct.size
                children = []
                for _ in range(max(count, 0)):
                    child, offset = read_string(buf, offset)
                    children.append(child)
                append(children)
            elif op_type == -1:
                code = length(buf, offset)[0]
                offset += int_struct.size
                append(EXCEPTIONS[code]())
            else:
                raise ValueError(f"multiRead reply: unexpected result type {op_type} (err {err})")


def _serialize(op_type: int, paths: Sequence[str]) -> bytes:
    """The request body: for each path a header, the path (length-prefixed UTF-8) and no
    watch; the closing header. Joined at C level (no Python step per path)."""
    encoded = list(map(str.encode, paths))
    head = multiheader_struct.pack(op_type, False, -1)
    parts = chain.from_iterable(zip(repeat(head), map(int_struct.pack, map(len, encoded)),
                                    encoded, repeat(b"\0")))
    return b"".join(chain(parts, (multiheader_struct.pack(-1, True, -1),)))


_HEAD_INT = struct.Struct("!iBii")
"""A result's header with the int after it: getData's data length, or an error's code."""
_STAT_HEAD_INT = struct.Struct("!q24xi32x" + "iBii")
"""A getData result's stat (czxid and version kept) with the next result's header and int."""
_PAD = b"\0" * (_HEAD_INT.size - HEADER_BYTES)
"""After the closing header, so that it too is read with the int that would follow it."""


class Node(NamedTuple):
    """A znode as bulk reads hand it: its data (``b""`` for none), data version, creation zxid."""

    data: bytes
    version: int
    czxid: int


NodeResult = Node | KazooException


class MultiReadNodes(NamedTuple):
    """A ``multiRead`` of ``getData`` whose results are ``Node``s: the same request as
    ``MultiRead(GET_DATA, paths)``, a reply read with two struct calls per znode (the stat's
    two fields and the next header in one) and no ``ZnodeStat``. At 1,000,000 partition states
    that is a third of the reply parsing (issue 26)."""

    paths: Sequence[str]
    type = OPCODE

    def serialize(self) -> bytes:
        return _serialize(GET_DATA, self.paths)

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        buf = buf[offset:] + _PAD
        head, stat_head = _HEAD_INT.unpack_from, _STAT_HEAD_INT.unpack_from
        step, stat_step = _HEAD_INT.size, _STAT_HEAD_INT.size
        new = tuple.__new__
        results: list[Any] = []
        append = results.append
        op_type, done, err, n = head(buf, 0)
        offset = step
        while not done:
            if op_type == GET_DATA:
                if n < 0:
                    data = b""
                else:
                    data = buf[offset : offset + n]
                    offset += n
                czxid, version, op_type, done, err, n = stat_head(buf, offset)
                offset += stat_step
                append(new(Node, (data, version, czxid)))
            elif op_type == -1:
                append(EXCEPTIONS[n]())  # n: the error code
                op_type, done, err, n = head(buf, offset)
                offset += step
            else:
                raise ValueError(f"multiRead reply: unexpected result type {op_type} (err {err})")
        return results


def full_path(chroot: str | None, path: str) -> str:
    """``path`` (absolute, as the client sees it) with the client's chroot in front: kazoo's
    ``_prefix_root`` without its split-and-rejoin for the paths kcontrol builds (absolute, no
    empty, ``.`` or ``..`` component, no trailing slash); anything else goes through kazoo's own
    normalisation (which also refuses relative components)."""
    if path[:1] != "/" or "//" in path or "/." in path or (path[-1] == "/" and path != "/"):
        return _prefix_root(chroot, path)
    if not chroot:
        return path
    if not _clean_chroot(chroot):
        return _prefix_root(chroot, path)
    return chroot if path == "/" else chroot + path


def full_paths(chroot: str | None, paths: Sequence[str]) -> list[str]:
    """``full_path`` of every path, checked all at once: joined by newlines, the paths are all
    clean (each starts with ``/``, none is ``/`` or ends with ``/``, no ``//`` or ``/.``, no
    newline inside) exactly when these substring tests pass; else path by path."""
    joined = "\n".join(paths)
    if (
        joined.count("\n") != len(paths) - 1
        or ("\n" + joined).count("\n/") != len(paths)
        or "//" in joined or "/." in joined or "/\n" in joined or joined.endswith("/")
        or not (not chroot or _clean_chroot(chroot))
    ):
        return [full_path(chroot, p) for p in paths]
    if not chroot:
        return list(paths)
    return [chroot + p for p in paths]


def _clean_chroot(chroot: str) -> bool:
    return chroot[:1] == "/" and "//" not in chroot and "/." not in chroot and chroot[-1] != "/"


def request_bytes(full_paths: Iterable[str]) -> int:
    """The exact size of the framed ``multiRead`` request packet for these (chrooted) paths."""
    total = FRAME_OVERHEAD + HEADER_BYTES
    for path in full_paths:
        total += REQUEST_PATH_OVERHEAD + len(path.encode("utf-8"))
    return total


def max_paths_for(expected_znode_bytes: int, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> int:
    """How many reads fit one reply under ``max_batch_bytes`` if each znode holds this much data."""
    per_path = RESPONSE_OVERHEAD + max(expected_znode_bytes, 0)
    return max(1, (max_batch_bytes - RESPONSE_FRAME_OVERHEAD) // per_path)


def cut_batches(
    full_paths: Sequence[str],
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_batch_paths: int = DEFAULT_MAX_BATCH_PATHS,
) -> list[tuple[int, int]]:
    """``[start, end)`` index ranges: each batch at most ``max_batch_paths`` paths and a request
    of at most ``max_batch_bytes`` bytes. A single path too long for any batch raises ValueError.

    Greedy (each batch as long as it may be), computed per batch rather than per path: the
    running request size is a prefix sum, and each batch's end a bisection in it."""
    if max_batch_paths < 1:
        raise ValueError(f"max_batch_paths must be at least 1, not {max_batch_paths}")
    if not full_paths:
        return []
    base = FRAME_OVERHEAD + HEADER_BYTES
    costs = list(map(add, map(len, map(str.encode, full_paths)), repeat(REQUEST_PATH_OVERHEAD)))
    if base + max(costs) > max_batch_bytes:
        path = full_paths[costs.index(max(costs))]
        raise ValueError(f"path {path[:80]!r}... alone exceeds {max_batch_bytes} bytes")
    total = list(accumulate(costs, initial=0))  # total[i]: the request bytes of paths[:i]
    n = len(full_paths)
    batches: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = bisect_right(total, total[start] + max_batch_bytes - base, start + 1,
                           min(start + max_batch_paths, n) + 1) - 1
        batches.append((start, end))
        start = end
    return batches


def call_many(client: KazooClient, requests: Sequence[Any]) -> list[Any]:
    """Queue many kazoo requests at once; their async results, in order.

    What ``client._call`` does for one request, for all of them: kazoo's connection thread
    sends one queued request per byte written to its wake-up socket, so N requests are queued
    and N bytes written in one ``send``. One call per request instead costs a system call and
    a hand-over of the interpreter lock to the connection thread each time: 1,000 topic
    watches took 0.4 s that way on a loaded machine. A client that is not usable (closed,
    expired, failed authentication) gets the requests one by one, so each fails as kazoo
    fails it."""
    results = [client.handler.async_result() for _ in requests]
    if not requests:
        return results
    if client._state in CLOSED_STATES:
        for request, result in zip(requests, results, strict=True):
            client._call(request, result)
        return results
    client._queue.extend(zip(requests, results, strict=True))
    write_sock = client._connection._write_sock
    try:
        if write_sock is None:
            raise OSError("the connection has been closed")
        write_sock.sendall(b"\0" * len(requests))
    except OSError:
        for result in results:
            if not result.ready():
                result.set_exception(ConnectionClosedError("Connection has been closed"))
    return results


def supports_multi_read(client: KazooClient) -> bool | None:
    """What ``read_many`` learnt about this client's server: True, False, or None (not tried)."""
    return _support.get(client)


def probe_multi_read(client: KazooClient, timeout: float | None = None) -> bool:
    """Whether the client's server answers ``multiRead``; asked once per client, then remembered.

    The probe is a one-path ``multiRead`` of the chroot. A server without opcode 22 logs "unknown
    type", answers ``UNIMPLEMENTED`` and closes the connection (``UnimplementedRequestProcessor``);
    kazoo may see either the error or only the lost connection (ZooKeeper 3.8 shows the latter
    for an unknown opcode). So: ``UnimplementedError`` -> no; a lost connection -> probe once more
    after kazoo reconnects (same session), and a second loss -> no. The dropped connection
    suspends the client for a moment: only a pre-3.6 server ever pays that, once.
    """
    known = _support.get(client)
    if known is not None:
        return known
    wait = timeout if timeout is not None else max(client._session_timeout / 1000.0, 10.0)
    dropped = threading.Event()

    def listener(state: str) -> None:
        if state != KazooState.CONNECTED:
            dropped.set()

    client.add_listener(listener)
    try:
        supported = False
        for attempt in range(2):
            dropped.clear()
            result = client.handler.async_result()
            client._call(MultiRead(GET_DATA, (full_path(client.chroot, "/"),)), result)
            try:
                result.get(timeout=wait)
                supported = True
            except UnimplementedError:
                supported = False
            except ConnectionLoss:
                if attempt == 0:
                    continue
            break
        if not supported:
            # The server closes the connection right after its UNIMPLEMENTED reply: let that
            # happen before any fallback read is sent, so none is lost with the connection
            # (requests made while kazoo reconnects wait in its queue).
            dropped.wait(min(wait, 5.0))
    finally:
        client.remove_listener(listener)
    _support[client] = supported
    return supported


def forget_multi_read_support(client: KazooClient) -> None:
    """Probe again on the next read (e.g. after reconnecting to an upgraded ensemble)."""
    _support.pop(client, None)


def read_many(
    client: KazooClient,
    paths: Iterable[str],
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_batch_paths: int | None = None,
    *,
    expected_znode_bytes: int | None = None,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    mode: Mode = "auto",
    timeout: float | None = None,
) -> dict[str, DataResult]:
    """``getData`` of every path (no watches): ``{path: (data, stat)}``, or ``{path: error}`` for a
    path that failed on its own (``NoNodeError``, ``NoAuthError``). A failure of a whole batch
    (connection loss, session expiry, timeout) raises. Paths are as the client sees them (relative
    to its chroot); duplicates are read once."""
    unique = list(dict.fromkeys(paths))
    out: dict[str, DataResult] = {}
    for start, end, replies in read_batches(
        client, unique, max_batch_bytes, max_batch_paths,
        expected_znode_bytes=expected_znode_bytes, max_in_flight=max_in_flight, mode=mode,
        timeout=timeout,
    ):
        out.update(zip(unique[start:end], replies, strict=True))
    return out


def read_batches(
    client: KazooClient,
    paths: Sequence[str],
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_batch_paths: int | None = None,
    *,
    expected_znode_bytes: int | None = None,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    mode: Mode = "auto",
    timeout: float | None = None,
) -> Iterator[tuple[int, int, list[DataResult]]]:
    """``getData`` of every path, as the answers arrive: ``(start, end, results)`` with the results
    of ``paths[start:end]`` in order, ranges consecutive from 0 to ``len(paths)``. The next batches
    stay in flight while the caller works on one (a failover decodes batch k while the server
    answers batch k + 1). Results and errors as ``read_many``; duplicates are read twice."""
    return _run(client, paths, GET_DATA, max_batch_bytes, max_batch_paths, expected_znode_bytes,
                max_in_flight, mode, timeout)


def read_nodes(
    client: KazooClient,
    paths: Sequence[str],
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_batch_paths: int | None = None,
    *,
    expected_znode_bytes: int | None = None,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    mode: Mode = "auto",
    timeout: float | None = None,
) -> Iterator[tuple[int, int, list[NodeResult]]]:
    """``read_batches`` whose results are ``Node(data, version, czxid)`` instead of ``(data,
    ZnodeStat)`` (errors the same): what a reader keeps of a znode, parsed with less work."""
    return _run(client, paths, GET_DATA, max_batch_bytes, max_batch_paths, expected_znode_bytes,
                max_in_flight, mode, timeout, lean=True)


def children_many(
    client: KazooClient,
    paths: Iterable[str],
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_batch_paths: int | None = None,
    *,
    expected_children_bytes: int | None = None,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    mode: Mode = "auto",
    timeout: float | None = None,
) -> dict[str, ChildrenResult]:
    """``getChildren`` of every path (no watches): ``{path: [child, ...]}`` or ``{path: error}``.
    Size the batches with ``expected_children_bytes`` (children names' total bytes per path)."""
    unique = list(dict.fromkeys(paths))
    out: dict[str, ChildrenResult] = {}
    for start, end, replies in _run(client, unique, GET_CHILDREN, max_batch_bytes,
                                    max_batch_paths, expected_children_bytes, max_in_flight,
                                    mode, timeout):
        out.update(zip(unique[start:end], replies, strict=True))
    return out


def _run(
    client: KazooClient,
    paths: Sequence[str],
    op_type: int,
    max_batch_bytes: int,
    max_batch_paths: int | None,
    expected_bytes: int | None,
    max_in_flight: int,
    mode: Mode,
    timeout: float | None,
    lean: bool = False,
) -> Iterator[tuple[int, int, list[Any]]]:
    if not paths:
        return
    if max_batch_paths is None:
        max_batch_paths = DEFAULT_MAX_BATCH_PATHS
        if expected_bytes is not None:
            max_batch_paths = min(max_batch_paths, max_paths_for(expected_bytes, max_batch_bytes))
    done = 0  # paths answered so far: a fallback resumes after them
    use_multi = mode == "multi_read" or (mode == "auto" and probe_multi_read(client, timeout))
    if use_multi:
        full = full_paths(client.chroot, paths)
        batches = cut_batches(full, max_batch_bytes, max_batch_paths)
        try:
            for got in _multi_read(client, full, batches, op_type, max_in_flight, timeout,
                                   lean):
                yield got
                done = got[1]
            return
        except UnimplementedError:
            if mode == "multi_read":
                raise
            _support[client] = False
    yield from _pipelined(client, paths, done, op_type, max(max_in_flight * max_batch_paths, 1),
                          timeout, lean)


def _multi_read(
    client: KazooClient,
    full: list[str],
    batches: list[tuple[int, int]],
    op_type: int,
    max_in_flight: int,
    timeout: float | None,
    lean: bool = False,
) -> Iterator[tuple[int, int, list[Any]]]:
    def request(start: int, end: int) -> Any:
        return MultiReadNodes(full[start:end]) if lean else MultiRead(op_type, full[start:end])

    return _requests(client, batches, request, max_in_flight, timeout)


def read_prepared(
    client: KazooClient,
    batches: list[tuple[int, int]],
    body: Callable[[int, int], bytes],
    *,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    timeout: float | None = None,
) -> Iterator[tuple[int, int, list[NodeResult]]]:
    """``read_nodes`` by ``multiRead`` of requests the caller builds: ``body(start, end)`` is
    the request body (as ``MultiReadNodes.serialize`` would give it) reading the caller's
    paths ``[start, end)``, each batch within the server's limits (``cut_batches``'). Built
    as each batch is sent. The caller has probed the server (``probe_multi_read``)."""
    return _requests(client, batches, lambda start, end: PreparedRead(body(start, end)),
                     max_in_flight, timeout)


class PreparedRead(NamedTuple):
    """A ``multiRead`` of ``getData`` sent as built (``body``), its reply read as
    ``MultiReadNodes`` reads it."""

    body: bytes
    type = OPCODE

    def serialize(self) -> bytes:
        return self.body

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        return MultiReadNodes.deserialize(buf, offset)

    def __repr__(self) -> str:
        return f"PreparedRead({len(self.body)} bytes)"


def _requests(
    client: KazooClient,
    batches: list[tuple[int, int]],
    request: Callable[[int, int], Any],
    max_in_flight: int,
    timeout: float | None,
) -> Iterator[tuple[int, int, list[Any]]]:
    def submit(start: int, end: int) -> Any:
        result = client.handler.async_result()
        client._call(request(start, end), result)
        return result

    def collect(start: int, end: int, result: Any) -> tuple[int, int, list[Any]]:
        replies = result.get(timeout=timeout)
        if len(replies) != end - start:
            raise ValueError(f"multiRead answered {len(replies)} results for {end - start} reads")
        _support[client] = True
        return start, end, replies

    return _windowed(batches, submit, collect, max(1, max_in_flight))


def _pipelined(
    client: KazooClient, paths: Sequence[str], first: int, op_type: int, window: int,
    timeout: float | None, lean: bool = False,
) -> Iterator[tuple[int, int, list[Any]]]:
    call = client.get_async if op_type == GET_DATA else client.get_children_async

    def submit(start: int, end: int) -> Any:
        return call(paths[start])

    def collect(start: int, end: int, result: Any) -> tuple[int, int, list[Any]]:
        try:
            reply = result.get(timeout=timeout)
            if op_type == GET_DATA:
                data, stat = reply
                data = bytes(data) if data is not None else b""
                reply = Node(data, stat.version, stat.czxid) if lean else (data, stat)
        except KazooException as exc:
            if not _per_path_error(exc):
                raise
            reply = exc
        return start, end, [reply]

    return _windowed([(i, i + 1) for i in range(first, len(paths))], submit, collect, window)


def _per_path_error(exc: KazooException) -> bool:
    """Errors that concern one znode, as multiRead reports them, rather than the session."""
    return isinstance(exc, NoNodeError | NoAuthError)


def _windowed(
    batches: list[tuple[int, int]],
    submit: Callable[[int, int], Any],
    collect: Callable[[int, int, Any], tuple[int, int, list[Any]]],
    window: int,
) -> Iterator[tuple[int, int, list[Any]]]:
    """Keep up to ``window`` requests in flight; replies come back in order (one session is FIFO).
    A batch is yielded once answered, while the batches after it are already in flight."""
    pending: deque[tuple[int, int, Any]] = deque()
    for start, end in batches:
        if len(pending) >= window:
            yield collect(*pending.popleft())
        pending.append((start, end, submit(start, end)))
    while pending:
        yield collect(*pending.popleft())
