"""``kcontrol metadata-shell --bootstrap-controller``: the committed image of a live quorum,
read over Kafka's protocol as an observer without a replica id. The decisions are
``observer_read``'s (pure); this module finds the leader and carries the requests on one
synchronous connection (``adapters.kraft_node.wire_client``), with the quorum's own codec
(``raft_frames``, ``raft_convert``) and the log's batch decoder for the records.

Finding the leader: each address is asked a Fetch in epoch -1, which any voter answers
``FENCED_LEADER_EPOCH`` with the epoch and the leader it knows; the same connection is then
asked in that epoch. A node that is not the leader names it: the reader goes to that
leader's address -- given as ``ID@HOST:PORT`` (``controller.quorum.voters``' form), or else
learnt from the node (DescribeCluster for the controllers' endpoints, KIP-919) -- and
otherwise asks the other addresses in turn. A leader that moves during the read (a new
epoch), or a snapshot deleted while it is fetched, starts the read again, at most
``MAX_RESTARTS`` times.

Bounded: every request waits at most ``timeout`` seconds, the whole read at most
``DEADLINE_FACTOR`` times that, and at most ``max_bytes`` of records and snapshot are read."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from adapters.kraft_node.wire_client import WireClient, WireError, parse_address
from adapters.metadata_tools.image_source import Loaded, SourceError, snapshot_records
from adapters.metadata_tools.observer_read import (
    LEADERSHIP_ERRORS,
    LeaderMoved,
    ObserverRead,
    ReadAgain,
    ReadError,
)
from adapters.metadata_tools.shell_tree import Provenance
from adapters.network.codec.errors import CodecError
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.network.codec.raft_registry import SEND_VERSIONS
from adapters.raft_log import METADATA, MalformedBatch, decode_batches
from adapters.raft_log.batch_format import read_header
from fsm.errors import ErrorCode
from fsm.kraft.image import ImageError, MetadataImage
from fsm.raft.messages import Batch, FetchRequest, FetchResponse, OffsetAndEpoch

MAX_RESTARTS = 3
MAX_HOPS = 16
DEADLINE_FACTOR = 20
FETCH_MAX_BYTES = 8 << 20
CLIENT_ID = "kcontrol-metadata-shell"
DESCRIBE_CLUSTER = 60

Address = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Controller:
    node_id: int | None
    address: Address

    @property
    def where(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"


def parse_controllers(text: str) -> list[Controller]:
    """``HOST:PORT,...`` or ``ID@HOST:PORT,...`` (mixed allowed); ``ValueError`` naming the
    bad entry."""
    out = []
    for part in text.split(","):
        entry = part.strip()
        if not entry:
            continue
        ident, at, rest = entry.rpartition("@")
        node_id = None
        if at:
            if not ident.isdigit():
                raise ValueError(f"--bootstrap-controller entry {entry!r}: want HOST:PORT or "
                                 "ID@HOST:PORT")
            node_id = int(ident)
        out.append(Controller(node_id, parse_address(rest, "--bootstrap-controller")))
    if not out:
        raise ValueError("--bootstrap-controller is empty: want HOST:PORT[,...]")
    return out


class _Wire:
    """Fetch and FetchSnapshot on one connection, as values; records decoded by the log's
    batch decoder (metadata records as values), their bytes counted."""

    def __init__(self, controller: Controller, timeout: float, fetch_max_bytes: int) -> None:
        self.controller = controller
        self.client = WireClient(*controller.address, timeout=timeout, client_id=CLIENT_ID)
        self.last_size = 0

        def decode(data: bytes) -> tuple[Batch, ...]:
            self.last_size = len(data)
            return decode_batches(bytes(data), METADATA, keep_raw=True)

        def no_encode(_: object) -> bytes:
            raise TypeError("the metadata shell sends no records")

        self.converter = RaftConverter(RecordsCodec(no_encode, decode),
                                       fetch_max_bytes=fetch_max_bytes)

    def ask(self, request: Any) -> Any:
        key, _, body = self.converter.to_wire(request)
        self.last_size = 0
        answer = self.client.call(int(key), SEND_VERSIONS[key], body)
        try:
            return self.converter.from_wire(int(key), False, answer)
        except (CodecError, MalformedBatch) as exc:
            raise WireError(f"{self.controller.where}: the answer does not decode: "
                            f"{exc}") from None

    def close(self) -> None:
        self.client.close()


def _batch_time(b: Batch) -> int:
    raw = b.raw
    return read_header(raw).max_timestamp if raw is not None else 0


def _decode_snapshot(data: bytes, snap: OffsetAndEpoch) -> tuple[list[Any], int]:
    try:
        return snapshot_records(data, snap, f"snapshot {snap.offset}-{snap.epoch} (fetched)")
    except SourceError as exc:
        raise ReadError(str(exc)) from None


def _voters_of(c: Controller, timeout: float) -> dict[int, Controller]:
    """The voters' addresses as the controller at ``c`` knows them (DescribeCluster v1 for
    the controllers' endpoints, KIP-919), or {} if it does not say."""
    body = {"include_cluster_authorized_operations": False, "endpoint_type": 2}
    try:
        with WireClient(*c.address, timeout=timeout, client_id=CLIENT_ID) as client:
            answer = client.call(DESCRIBE_CLUSTER, 1, body)
        if answer.get("error_code", 0) != 0:
            return {}
        return {b["broker_id"]: Controller(b["broker_id"], (b["host"], b["port"]))
                for b in answer.get("brokers", [])}
    except (WireError, KeyError, TypeError):
        return {}


def _find_leader(controllers: Sequence[Controller], timeout: float, fetch_max_bytes: int,
                 deadline: float, problems: list[str]
                 ) -> tuple[_Wire, int, FetchResponse]:
    """A connection to the leader, its epoch, and its answer to a Fetch from offset 0 in
    that epoch (the read's first)."""
    by_id = {c.node_id: c for c in controllers if c.node_id is not None}
    queue = list(controllers)
    tried: set[Address] = set()
    hops = 0
    while queue and hops < MAX_HOPS and time.monotonic() < deadline:
        c = queue.pop(0)
        if c.address in tried:
            continue
        tried.add(c.address)
        hops += 1
        wire = _Wire(c, timeout, fetch_max_bytes)
        try:
            epoch = -1
            for _ in range(2):  # epoch -1 first: the answer names the epoch and the leader
                answer = wire.ask(FetchRequest(-1, epoch, 0, -1))
                assert isinstance(answer, FetchResponse)
                if answer.error is ErrorCode.NONE:
                    return wire, epoch, answer
                if answer.error is ErrorCode.FENCED_LEADER_EPOCH and epoch < 0:
                    epoch = answer.leader_epoch
                    continue
                break
        except WireError as exc:
            problems.append(str(exc))
            wire.close()
            continue
        wire.close()
        leader = answer.leader_id
        known = f"leader {leader if leader >= 0 else 'unknown'}, epoch {answer.leader_epoch}"
        if answer.error in LEADERSHIP_ERRORS:
            problems.append(f"{c.where} is not the leader ({known})")
        else:
            problems.append(f"{c.where} answered {answer.error.name} ({known})")
        if leader >= 0 and leader not in by_id:
            by_id.update(_voters_of(c, timeout))
        target = by_id.get(leader)
        if target is not None and target.address not in tried:
            queue.insert(0, target)
    raise SourceError("no leader found: " + "; ".join(problems or ["no address answered"]))


def read_committed(controllers: Sequence[Controller], *, timeout: float, max_bytes: int
                   ) -> tuple[ObserverRead, str]:
    """The read of the committed log, done; and the leader it came from."""
    deadline = time.monotonic() + timeout * DEADLINE_FACTOR
    fetch_max_bytes = min(FETCH_MAX_BYTES, max_bytes)
    problems: list[str] = []
    for _ in range(MAX_RESTARTS + 1):
        wire, epoch, first = _find_leader(controllers, timeout, fetch_max_bytes, deadline,
                                          problems)
        read = ObserverRead(epoch, max_bytes, _decode_snapshot, _batch_time)
        try:
            read.on_fetch(first, wire.last_size)  # the answer to FetchRequest(-1, epoch, 0, -1)
            while not read.done:
                if time.monotonic() > deadline:
                    raise SourceError(f"the read did not reach the high watermark within "
                                      f"{timeout * DEADLINE_FACTOR:g} s (at offset "
                                      f"{read.offset} of {read.high_watermark})")
                request = read.next_request()
                answer = wire.ask(request)
                if isinstance(request, FetchRequest):
                    read.on_fetch(answer, wire.last_size)
                else:
                    read.on_snapshot_chunk(answer)
            return read, f"{wire.controller.where} (leader in epoch {epoch})"
        except (LeaderMoved, ReadAgain) as exc:
            problems.append(f"{wire.controller.where}: {exc}")
        except WireError as exc:
            problems.append(str(exc))
        except ReadError as exc:
            raise SourceError(f"{wire.controller.where}: {exc}") from None
        finally:
            with contextlib.suppress(OSError):
                wire.close()
    raise SourceError(f"the read was started again {MAX_RESTARTS} times (the leader or its "
                      f"snapshot kept moving): {'; '.join(problems)}")


def load_quorum(text: str, *, timeout: float, max_bytes: int) -> Loaded:
    """The committed image of the quorum at ``text`` (``--bootstrap-controller``)."""
    try:
        controllers = parse_controllers(text)
    except ValueError as exc:
        raise SourceError(str(exc)) from None
    read, leader = read_committed(controllers, timeout=timeout, max_bytes=max_bytes)
    image = MetadataImage()
    try:
        image.apply_all(read.snapshot_records)
        image.apply_all(read.records)
    except ImageError as exc:
        raise SourceError(f"{leader}: the records do not replay: {exc}") from None
    last, epoch, when = read.last_batch
    snap = f"snapshot {read.snapshot.offset}-{read.snapshot.epoch} and " if read.snapshot else ""
    source = (f"quorum {leader}: {snap}{len(read.records)} records, committed, read to offset "
              f"{read.offset} (the high watermark when the read began: {read.target})")
    return Loaded(image, Provenance(last, epoch, when), source)
