"""The node's local admin socket: the tests' and benchmarks' way in (issue 25 brings the real
client paths). One JSON object per line each way, on a loopback TCP port:
``{"op": "status"}`` -> ``{"ok": true, ...}``; a failure is ``{"ok": false, "error": "..."}``.
The operations are the node's (``QuorumNode.admin_ops``); this module only frames them.

Bounded: a request line is at most ``MAX_LINE`` bytes, at most ``MAX_CLIENTS`` connections
are served at once (more are closed with an error line), and an idle connection is closed
after ``IDLE_TIMEOUT_S``."""

from __future__ import annotations

import json
import logging
import socket
import socketserver
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("kcontrol.raft.admin")

MAX_LINE = 64 * 1024
MAX_CLIENTS = 32
IDLE_TIMEOUT_S = 600.0

AdminOp = Callable[[dict[str, Any]], dict[str, Any]]


class AdminError(Exception):
    """A request the node refuses; its message is sent back as ``error``."""


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        srv = self.server
        with srv.lock:
            if srv.clients >= MAX_CLIENTS:
                self._write({"ok": False, "error": f"more than {MAX_CLIENTS} admin clients"})
                return
            srv.clients += 1
        try:
            self.connection.settimeout(IDLE_TIMEOUT_S)
            while True:
                try:
                    line = self.rfile.readline(MAX_LINE + 1)
                except (TimeoutError, OSError):
                    return
                if not line:
                    return
                if len(line) > MAX_LINE:
                    self._write({"ok": False, "error": f"request over {MAX_LINE} bytes"})
                    return
                self._write(srv.answer(line))
        finally:
            with srv.lock:
                srv.clients -= 1

    def _write(self, reply: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(reply).encode() + b"\n")
        self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], ops: dict[str, AdminOp]) -> None:
        super().__init__(address, _Handler)
        self.ops = ops
        self.lock = threading.Lock()
        self.clients = 0

    def answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
        except ValueError as exc:
            return {"ok": False, "error": f"not JSON: {exc}"}
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return {"ok": False, "error": 'a request is an object with a string "op"'}
        op = self.ops.get(request["op"])
        if op is None:
            return {"ok": False, "error": f"unknown op {request['op']!r}; known: "
                                          f"{', '.join(sorted(self.ops))}"}
        try:
            return {"ok": True, **op(request)}
        except AdminError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 -- answered, logged, the server lives on
            log.exception("admin op %r failed", request["op"])
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


class AdminServer:
    """Serves ``ops`` on ``host:port`` (port 0: any free one; ``port`` is the bound one)."""

    def __init__(self, ops: dict[str, AdminOp], host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), ops)
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="kcontrol-raft-admin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add_ops(self, ops: dict[str, AdminOp]) -> None:
        """More operations on the same socket (a combined node's broker role adds its own);
        a name already served is refused."""
        taken = sorted(set(ops) & set(self._server.ops))
        if taken:
            raise ValueError(f"admin ops already served: {', '.join(taken)}")
        self._server.ops.update(ops)

    def close(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for a serve_forever that never ran
            self._server.shutdown()
        self._server.server_close()


class AdminClient:
    """One connection to a node's admin socket (tests, benchmarks)."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._file = self._sock.makefile("rwb")

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        """The node's answer; ``AdminError`` if it refused."""
        self._file.write(json.dumps({"op": op, **args}).encode() + b"\n")
        self._file.flush()
        line = self._file.readline(MAX_LINE * 16)
        if not line:
            raise ConnectionError("the node closed the admin connection")
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            raise AdminError(reply.get("error", "refused"))
        return reply

    def close(self) -> None:
        try:
            self._file.close()
        finally:
            self._sock.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
