"""ZooKeeper's four-letter words (``srvr``, ``mntr``, ``ruok``) over a plain socket, and their parsing.

The server must allow them (``4lw.commands.whitelist=*`` in ``zoo.cfg``); the ensemble launcher sets that.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

NOT_SERVING_TEXT = "This ZooKeeper instance is not currently serving requests"
NOT_SERVING = "not serving"
SERVING_MODES = frozenset({"leader", "follower", "observer", "standalone", "read-only"})


class FourLetterError(Exception):
    """A four-letter word could not be sent, or its answer could not be understood."""


@dataclass(frozen=True)
class SrvrInfo:
    """What ``srvr`` tells about one server."""

    mode: str  # one of SERVING_MODES, or NOT_SERVING
    zxid: int | None = None
    version: str | None = None
    node_count: int | None = None
    connections: int | None = None
    outstanding: int | None = None

    @property
    def serving(self) -> bool:
        return self.mode in SERVING_MODES

    @property
    def zxid_hex(self) -> str | None:
        return None if self.zxid is None else f"0x{self.zxid:x}"

    @property
    def epoch(self) -> int | None:
        """The leader epoch: the zxid's high 32 bits."""
        return None if self.zxid is None else self.zxid >> 32

    @property
    def counter(self) -> int | None:
        """The transaction counter within the epoch: the zxid's low 32 bits."""
        return None if self.zxid is None else self.zxid & 0xFFFFFFFF


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    try:
        return int(value, 16) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None


def parse_srvr(text: str) -> SrvrInfo:
    """Parse a ``srvr`` (or ``stat``) answer. Raises FourLetterError when it is neither an answer
    with a ``Mode:`` line nor the "not currently serving" notice."""
    if NOT_SERVING_TEXT in text:
        return SrvrInfo(mode=NOT_SERVING)
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            fields.setdefault(key.strip().lower(), value.strip())
    mode = fields.get("mode")
    if mode is None:
        raise FourLetterError(f"srvr answer has no 'Mode:' line: {text[:200]!r}")
    return SrvrInfo(
        mode=mode.lower(),
        zxid=_int_or_none(fields.get("zxid")),
        version=fields.get("zookeeper version"),
        node_count=_int_or_none(fields.get("node count")),
        connections=_int_or_none(fields.get("connections")),
        outstanding=_int_or_none(fields.get("outstanding")),
    )


def parse_mntr(text: str) -> dict[str, int | float | str]:
    """Parse a ``mntr`` answer (``key<TAB>value`` lines) into a dict; numbers become int or float."""
    if NOT_SERVING_TEXT in text:
        return {"zk_server_state": NOT_SERVING}
    metrics: dict[str, int | float | str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if not sep:
            continue
        value = value.strip()
        number: int | float | str
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                number = value
        metrics[key.strip()] = number
    if not metrics:
        raise FourLetterError(f"mntr answer has no 'key<TAB>value' lines: {text[:200]!r}")
    return metrics


def send_command(host: str, port: int, command: str, timeout: float = 2.0) -> str:
    """Send one four-letter word and return the whole answer (the server closes the connection)."""
    if len(command) != 4:
        raise ValueError(f"a four-letter word has four letters, not {command!r}")
    chunks: list[bytes] = []
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(command.encode("ascii"))
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError as exc:
        raise FourLetterError(f"{command} to {host}:{port} failed: {exc}") from exc
    text = b"".join(chunks).decode("utf-8", errors="replace")
    if "is not executed because it is not in the whitelist" in text:
        raise FourLetterError(
            f"{host}:{port} refuses {command!r}: add '4lw.commands.whitelist=*' to its zoo.cfg"
        )
    return text


def srvr(host: str, port: int, timeout: float = 2.0) -> SrvrInfo:
    return parse_srvr(send_command(host, port, "srvr", timeout))


def mntr(host: str, port: int, timeout: float = 2.0) -> dict[str, int | float | str]:
    return parse_mntr(send_command(host, port, "mntr", timeout))


def ruok(host: str, port: int, timeout: float = 2.0) -> bool:
    """True when the server answers ``imok`` (it runs; it may still not be serving)."""
    try:
        return send_command(host, port, "ruok", timeout).strip() == "imok"
    except FourLetterError:
        return False
