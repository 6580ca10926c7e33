"""``QuorumNode``: one voter process's parts assembled -- the metadata log opened (recovered)
from its directory, the transport listening on the node's own voter address, the shell's
event thread, optionally the quorum controller on the log (``ControllerOnRaft``), and the
admin socket (``admin``) whose operations are defined here.

Start order: log (recovery) -> transport made (listening, not yet reading) -> shell started
(core built from the log's quorum-state and summary; ``Start`` queued) -> transport started
(delivering into the shell's queue, after ``Start``) -> admin socket. Stop: the reverse; a graceful
stop of a leader sends EndQuorumEpoch first (``stop(resign=True)``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_audit.node_ops import audit_ops
from adapters.network.codec.raft_convert import RaftConverter
from adapters.raft_log import BYTES, MetadataLog
from adapters.raft_node.admin import AdminError, AdminServer
from adapters.raft_node.appends import AppendTicket
from adapters.raft_node.args import NodeArgs
from adapters.raft_node.image_view import topics_view
from adapters.raft_node.port import NodePort
from adapters.raft_node.record_bytes import encoded
from adapters.raft_node.shell import RaftCore, RaftNodeShell, Runner, raft_driver
from adapters.raft_node.wire_records import records_codec
from adapters.raft_transport import RaftTransport
from fsm.kraft.controller.config import QuorumControllerConfig
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.on_raft import ControllerOnRaft
from fsm.kraft.records.codec import encode_record
from fsm.kraft.records.values import ConfigRecord
from fsm.raft.config import RaftConfig

log = logging.getLogger("kcontrol.raft")

MAX_APPEND_RECORDS = 10_000_000
MAX_WINDOW = 10_000
MAX_BATCH = 10_000
MAX_TIMEOUT_S = 600.0


def bench_records(count: int, size: int, start: int = 0) -> tuple[ConfigRecord, ...]:
    """``count`` metadata records of about ``size`` bytes each once encoded (topic configs:
    a real record type, so the log stores what a controller would)."""
    base = len(encode_record(ConfigRecord(2, "bench", "k0", "")))
    pad = "x" * max(size - base - 2, 0)
    return tuple(ConfigRecord(2, "bench", f"k{start + i}", pad) for i in range(count))


def open_metadata_log(directory: os.PathLike[str] | str) -> MetadataLog:
    """The node's log, opened and recovered, its records kept as bytes (``record_bytes``)."""
    return MetadataLog.open(directory, serde=BYTES)


def make_transport(args: NodeArgs, config: RaftConfig, deliver: Any,
                   served: Any = None) -> RaftTransport:
    """The quorum's TCP transport, listening on this node's voter address; batches travel
    in the log's own encoding (Kafka's record batches). ``served``: the controller's APIs
    on a controller node (``adapters.kraft_node.controller_apis``)."""
    converter = RaftConverter(records_codec(BYTES), args.cluster_id)
    return RaftTransport(args.node_id, args.voters, args.address, deliver, converter=converter,
                         retry_backoff_ms=config.retry_backoff_ms,
                         request_timeout_ms=config.request_timeout_ms, served=served)


def controller_apis(args: NodeArgs, shell: RaftNodeShell) -> Any:
    """The controller's APIs for this node's listener, or None when kwire's codec of them
    is not there (the node then serves the quorum's APIs only, and says so)."""
    try:
        from adapters.kraft_node.controller_apis import ControllerApis

        return ControllerApis(shell, args.cluster_id, listener_name=args.broker_listener,
                              voters=args.voters)
    except ImportError as exc:
        log.warning("[raft %d] the controller's APIs are not served on the listener: %s",
                    args.node_id, exc)
        return None


class QuorumNode:
    def __init__(self, args: NodeArgs, *, on_halt: Any = None) -> None:
        self.args = args
        self.config = RaftConfig(node_id=args.node_id, voters=tuple(sorted(args.voters)),
                                 election_timeout_ms=args.election_timeout_ms,
                                 fetch_timeout_ms=args.fetch_timeout_ms,
                                 election_backoff_max_ms=args.election_backoff_max_ms,
                                 request_timeout_ms=args.request_timeout_ms,
                                 retry_backoff_ms=args.retry_backoff_ms)
        self.controller: Any = None
        self.log: Any = None
        self.transport: Any = None
        self.shell: RaftNodeShell | None = None
        self.admin: AdminServer | None = None
        self._on_halt = on_halt

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        args = self.args
        args.directory.mkdir(parents=True, exist_ok=True)
        self.log = open_metadata_log(args.directory)
        self.shell = RaftNodeShell(self.config, self.log, None,
                                   make_runner=self._runner, hosts_controller=args.controller,
                                   flush_every=args.flush_every, on_halt=self._on_halt)
        served = controller_apis(args, self.shell) if args.controller else None
        self.transport = make_transport(args, self.config, self.shell.deliver, served)
        self.shell.attach_transport(self.transport)
        self.shell.start()  # Start is queued before anything the transport delivers
        start = getattr(self.transport, "start", None)
        if start is not None:
            start()
        self.admin = AdminServer(self.admin_ops(), "127.0.0.1", args.admin_port)
        self.admin.start()
        log.info("[raft %d] listening on %s:%d; admin on 127.0.0.1:%d%s", args.node_id,
                 *args.address, self.admin.port,
                 "; hosting the quorum controller" if args.controller else "")

    def stop(self, *, resign: bool = True) -> None:
        if self.admin is not None:
            self.admin.close()
        if self.shell is not None:
            self.shell.stop(resign=resign)

    def _runner(self, core: RaftCore, port: NodePort) -> Runner:
        if not self.args.controller:
            return raft_driver(core, port)
        a = self.args
        self.controller = QuorumController(QuorumControllerConfig(
            node_id=a.node_id, cluster_id=a.cluster_id, session_timeout_ms=a.session_timeout_ms,
            default_num_partitions=a.default_partitions,
            default_replication_factor=a.default_replication_factor))
        return ControllerOnRaft(core, self.controller, port,
                                snapshot_every=self.args.snapshot_every)

    # ------------------------------------------------------------------ admin operations

    def admin_ops(self) -> dict[str, Any]:
        ops = {"status": self._op_status, "append": self._op_append,
               "digest": self._op_digest}
        if self.args.controller:
            ops |= {"register_broker": self._op_register_broker,
                    "brokers": self._op_brokers, "topics": self._op_topics,
                    **audit_ops(self._shell_when_started)}
        return ops

    @property
    def _shell_when_started(self) -> RaftNodeShell:
        return self._shell()

    def _shell(self) -> RaftNodeShell:
        if self.shell is None:
            raise AdminError("the node has not started")
        return self.shell

    def _op_status(self, req: dict[str, Any]) -> dict[str, Any]:
        return self._shell().status.as_dict()

    def _op_append(self, req: dict[str, Any]) -> dict[str, Any]:
        """Append ``records`` records of ``size`` bytes in batches of ``batch``, at most
        ``window`` batches waiting for their commit at a time; answer once all are
        committed (or the first failure). The records (topic configs) are encoded once, here,
        as the client that makes them would; the log frames and writes each batch."""
        shell = self._shell()
        total = _arg(req, "records", 1, MAX_APPEND_RECORDS, 1)
        batch = _arg(req, "batch", 1, MAX_BATCH, 1)
        size = _arg(req, "size", 1, 100_000, 100)
        window = _arg(req, "window", 1, MAX_WINDOW, 1000)
        timeout = float(_arg(req, "timeout", 1, int(MAX_TIMEOUT_S), 60))
        deadline = time.monotonic() + timeout
        template = encoded(bench_records(batch, size))  # encoded once, as a client would
        waiting: deque[AppendTicket] = deque()
        first: AppendTicket | None = None
        last: AppendTicket | None = None
        t0 = time.monotonic()
        sent = 0
        while sent < total:
            n = min(batch, total - sent)
            ticket = shell.append(template[:n])
            first = first or ticket
            last = ticket
            waiting.append(ticket)
            sent += n
            while len(waiting) >= window or (ticket.done and ticket.error):
                _settle(waiting.popleft(), deadline)
        while waiting:
            _settle(waiting.popleft(), deadline)
        seconds = time.monotonic() - t0
        assert first is not None and last is not None
        return {"records": total, "base_offset": first.base_offset,
                "end_offset": last.end_offset, "epoch": last.epoch, "seconds": seconds,
                "high_watermark": shell.status.high_watermark}

    def _op_digest(self, req: dict[str, Any]) -> dict[str, Any]:
        """A digest of the log's batches in ``[0, to)`` (default: the high watermark), read
        from this node's log by its event thread."""
        shell = self._shell()
        to = req.get("to", shell.status.high_watermark)
        if not isinstance(to, int) or to < 0:
            raise AdminError(f"to {to!r}: a non-negative integer")

        def digest() -> dict[str, Any]:
            batches = shell.port.read_committed(0, to) if to else []
            h = hashlib.sha256()
            for b in batches:
                h.update(repr((b.base_offset, b.epoch, b.control, b.records)).encode())
            end = batches[-1].end_offset if batches else 0
            return {"to": to, "end_offset": end, "batches": len(batches),
                    "sha256": h.hexdigest()}

        return _wait(shell.call(digest), 30.0)

    def _op_register_broker(self, req: dict[str, Any]) -> dict[str, Any]:
        from fsm.kraft.controller.requests import BrokerRegistrationRequest

        broker_id = _arg(req, "broker_id", 0, 2**31 - 1, -1)
        incarnation = os.urandom(16)
        request = BrokerRegistrationRequest(broker_id, self.args.cluster_id, incarnation)
        response = _wait(self._shell().request(request), 30.0)
        return {"error": response.error.name, "broker_epoch": response.broker_epoch}

    def _op_brokers(self, req: dict[str, Any]) -> dict[str, Any]:
        def read() -> dict[str, Any]:
            c = self.controller
            return {"active": c.active, "epoch": c.epoch,
                    "committed_offset": c.committed_offset,
                    "brokers": {str(b): {"epoch": r.epoch, "fenced": r.fenced}
                                for b, r in sorted(c.committed.brokers.items())}}

        return _wait(self._shell().call(read), 30.0)

    def _op_topics(self, req: dict[str, Any]) -> dict[str, Any]:
        """The committed image's topics, partitions, leaders and ISRs (``image_view``)."""
        def read() -> dict[str, Any]:
            c = self.controller
            return {"active": c.active, "epoch": c.epoch,
                    "committed_offset": c.committed_offset,
                    "topics": topics_view(c.committed)}

        return _wait(self._shell().call(read), 30.0)


def _arg(req: dict[str, Any], name: str, low: int, high: int, default: int) -> int:
    value = req.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise AdminError(f"{name} {value!r}: an integer in {low}-{high}")
    return value


def _settle(ticket: AppendTicket, deadline: float) -> None:
    if not ticket.wait(max(deadline - time.monotonic(), 0.0)):
        raise AdminError(f"append at {ticket.base_offset} not committed in time")
    if ticket.error is not None:
        raise AdminError(ticket.error)


def _wait(future: Future[Any], timeout: float) -> Any:
    try:
        return future.result(timeout)
    except FutureTimeout:
        raise AdminError(f"no answer within {timeout:g} s") from None
    except RuntimeError as exc:
        raise AdminError(str(exc)) from None
