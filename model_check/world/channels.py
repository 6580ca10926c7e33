"""Per-connection FIFO channels between brokers (bounded, droppable).

A channel is keyed by ``(kind, src, dst)``:

* ``REQUEST``  controller (on broker ``src``) -> broker ``dst``: LeaderAndIsr,
  UpdateMetadata, StopReplica (control plane);
* ``RESPONSE`` broker ``src`` -> controller on broker ``dst``: their answers;
* ``SHUTDOWN`` broker ``src`` -> controller on ``dst``: ControlledShutdown;
* ``SHUTDOWN_REPLY`` controller on ``src`` -> broker ``dst``: its answer.

Messages on one channel arrive in order; channels are independent of each
other. A connection (the pair of brokers) can be dropped: every message in
flight between the two, in both directions, is lost. Each channel is an
immutable tuple, so a snapshot is one sorted tuple of the non-empty channels,
builtins only (``codec``), cached until the next change (every method that changes
``queues`` drops ``_snap``; change ``queues`` only through them).
"""

from __future__ import annotations

from typing import NamedTuple

from model_check.world.codec import decode, decoded_dict, encode
from model_check.world.fingerprint import Shared

REQUEST = "req"
RESPONSE = "resp"
SHUTDOWN = "cs"
SHUTDOWN_REPLY = "cs-reply"
KINDS = (REQUEST, RESPONSE, SHUTDOWN, SHUTDOWN_REPLY)


class ChannelKey(NamedTuple):
    kind: str
    src: int
    dst: int

    def describe(self) -> str:
        return f"{self.kind} {self.src}->{self.dst}"


class ChannelFull(AssertionError):
    """A channel went over its bound: the world (or a core) floods a peer."""


shared = Shared()
"""Snapshots, one object per value (``fingerprint.Shared``; ``World.canonical``)."""
_shared_key = Shared(1_000)
"""Channel keys, one object per value: their encodings are then memo hits (``codec``)."""


_PAIRS: dict[int, tuple[tuple, dict]] = {}


def pairs_of(snap: tuple) -> dict:
    """``{key: (encoded key, encoded queue)}`` of a snapshot, memoised by its identity
    (shared: callers copy it)."""
    hit = _PAIRS.get(id(snap))
    if hit is not None and hit[0] is snap:
        return hit[1]
    pairs = {decode(k): (k, q) for k, q in snap}
    if len(_PAIRS) >= 20_000:
        _PAIRS.clear()
    _PAIRS[id(snap)] = (snap, pairs)
    return pairs


class Channels:
    """Beside ``queues``, ``_pairs`` keeps each channel's encoded key and queue, changed
    along with it (a message is encoded once, when it is sent): a snapshot only sorts them."""

    def __init__(self, bound: int = 16) -> None:
        self.bound = bound
        self.queues: dict[ChannelKey, tuple[object, ...]] = {}
        self._pairs: dict[ChannelKey, tuple[tuple, tuple]] = {}
        self._snap: tuple | None = ()

    def snapshot(self) -> tuple:
        snap = self._snap
        if snap is None:
            snap = self._snap = shared(  # type: ignore[assignment]
                tuple(sorted(self._pairs.values())))
        return snap

    @classmethod
    def restore(cls, snap: tuple, bound: int = 16) -> Channels:
        ch = cls.__new__(cls)
        ch.bound = bound
        ch.queues = decoded_dict(snap).copy()
        ch._pairs = pairs_of(snap).copy()
        ch._snap = snap
        return ch

    def send(self, key: ChannelKey, message: object) -> None:
        q = self.queues.get(key, ())
        if len(q) >= self.bound:
            raise ChannelFull(f"channel {key.describe()} over its bound {self.bound}")
        self._snap = None
        key = _shared_key(key)
        pair = self._pairs.get(key)
        self.queues[key] = q + (message,)
        self._pairs[key] = (encode(key), (pair[1] if pair else ()) + (encode(message),))

    def peek(self, key: ChannelKey) -> object:
        return self.queues[key][0]

    def pop(self, key: ChannelKey) -> object:
        q = self.queues[key]
        self._snap = None
        if len(q) == 1:
            del self.queues[key]
            del self._pairs[key]
        else:
            self.queues[key] = q[1:]
            enc_key, enc_q = self._pairs[key]
            self._pairs[key] = (enc_key, enc_q[1:])
        return q[0]

    def nonempty(self) -> list[ChannelKey]:
        return sorted(self.queues)

    def length(self, key: ChannelKey) -> int:
        return len(self.queues.get(key, ()))

    def remove(self, key: ChannelKey) -> int:
        """Lose everything queued on channel ``key``."""
        q = self.queues.pop(key, ())
        self._pairs.pop(key, None)
        if q:
            self._snap = None
        return len(q)

    def drop_connection(self, a: int, b: int) -> int:
        """Lose everything in flight between brokers ``a`` and ``b`` (both ways)."""
        lost = 0
        for key in [k for k in self.queues if {k.src, k.dst} == {a, b}]:
            lost += self.remove(key)
        return lost

    def drop_broker(self, broker: int) -> int:
        """A process died: every connection it had is reset."""
        lost = 0
        for key in [k for k in self.queues if broker in (k.src, k.dst)]:
            lost += self.remove(key)
        return lost

    def process_gone(self, broker: int) -> int:
        """A process stopped: what it sent, and what was on its way to it but requests, is
        lost (requests wait for its next incarnation: ``executor._process_gone``)."""
        lost = 0
        for key in [k for k in self.queues
                    if k.src == broker or (k.dst == broker and k.kind != REQUEST)]:
            lost += self.remove(key)
        return lost

    def drop(self, kind: str, src: int | None = None, dst: int | None = None) -> int:
        lost = 0
        for key in [k for k in self.queues if k.kind == kind
                    and (src is None or k.src == src) and (dst is None or k.dst == dst)]:
            lost += self.remove(key)
        return lost

    def __len__(self) -> int:
        return sum(len(q) for q in self.queues.values())
