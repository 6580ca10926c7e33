"""Per-connection FIFO channels between brokers (bounded, droppable).

A channel is keyed by ``(kind, src, dst)``:

* ``REQUEST``  controller (on broker ``src``) -> broker ``dst``: LeaderAndIsr,
  UpdateMetadata, StopReplica (control plane);
* ``RESPONSE`` broker ``src`` -> controller on broker ``dst``: their answers, each as
  ``(request, answer)``: a lost answer means its request is sent again (below);
* ``SHUTDOWN`` broker ``src`` -> controller on ``dst``: ControlledShutdown;
* ``SHUTDOWN_REPLY`` controller on ``src`` -> broker ``dst``: its answer.

Messages on one channel arrive in order; channels are independent of each
other. A connection (the pair of brokers) can be dropped, and the world then does what the
live code does on a reset connection (``adapters.network.channel_manager``, seed 003):

* the controller's requests are **not** lost: its sender keeps a queue per broker and sends
  the request in flight again until it is answered or the broker is removed (Kafka's
  RequestSendThread). Requests still queued stay queued, and a request whose answer was on
  the wire goes back to the front of its queue: the broker may handle it twice;
* a ControlledShutdown and its answer are lost: the broker's attempt fails and its retry
  timer asks again (``fsm.broker.lifecycle``).

A process that stops loses what it sent and what was on its way to it, but requests to it
wait for its next incarnation (``process_gone``). A controller that removes a broker's
channel or resigns stops its sender: queued requests are dropped, the one in flight may
still arrive (``stop_sender``). Each channel is an
immutable tuple, so a snapshot is one sorted tuple of the non-empty channels,
builtins only (``codec``), cached until the next change (every method that changes
``queues`` drops ``_snap``; change ``queues`` only through them).
"""

from __future__ import annotations

from typing import NamedTuple

from model_check.world.codec import PLAIN, Codec, decode
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
"""Snapshots, one object per value (``World.canonical``): an intern table, not a memo of the
search (``fingerprint.Shared``)."""
_shared_key = Shared(1_000)
"""Channel keys, one object per value: their encodings are then memo hits (``codec``). An
intern table, not a memo of the search (``fingerprint.Shared``)."""


def pairs_of(snap: tuple, codec: Codec = PLAIN) -> dict:
    """``{key: (encoded key, encoded queue)}`` of a snapshot (``Codec.derived``: the search's
    codec remembers it by identity; shared: callers copy it)."""
    return codec.derived(_decode_pairs, snap)  # type: ignore[no-any-return]


def _decode_pairs(snap: tuple, _codec: Codec) -> dict:
    return {decode(k): (k, q) for k, q in snap}  # keys: small, shared by ``_shared_key``


class Channels:
    """Beside ``queues``, ``_pairs`` keeps each channel's encoded key and queue, changed
    along with it (a message is encoded once, when it is sent): a snapshot only sorts them."""

    def __init__(self, bound: int = 16, codec: Codec = PLAIN) -> None:
        """``codec``: how the messages are encoded (``World.codec``)."""
        self.bound = bound
        self.codec = codec
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
    def restore(cls, snap: tuple, bound: int = 16, codec: Codec = PLAIN) -> Channels:
        ch = cls.__new__(cls)
        ch.bound = bound
        ch.codec = codec
        ch.queues = codec.decoded_dict(snap).copy()
        ch._pairs = pairs_of(snap, codec).copy()
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
        encode = self.codec.encode
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
        """The connection between brokers ``a`` and ``b`` resets (both ways); returns how
        many messages were lost: answers and controlled-shutdown messages. Requests are
        kept, and the request of every lost answer is queued again (``_resend``)."""
        lost = 0
        for key in [k for k in self.queues if {k.src, k.dst} == {a, b} and k.kind != REQUEST]:
            if key.kind == RESPONSE:
                self._resend(key)
            lost += self.remove(key)
        return lost

    def process_gone(self, broker: int) -> int:
        """A process stopped: what it sent, and what was on its way to it but requests, is
        lost. Requests wait for its next incarnation (``executor.process_gone``), and so do
        the requests whose answers it had sent to a controller on another broker: that
        controller's sender sends them again."""
        lost = 0
        for key in [k for k in self.queues
                    if k.src == broker or (k.dst == broker and k.kind != REQUEST)]:
            if key.kind == RESPONSE and key.dst != broker:
                self._resend(key)
            lost += self.remove(key)
        return lost

    def _resend(self, answers: ChannelKey) -> None:
        """The answers queued on ``answers`` are about to be lost: their requests go back to
        the front of the controller's queue for that broker, in their order (the sender
        sends the request in flight again after reconnecting)."""
        again = tuple(request for request, _answer in self.queues.get(answers, ()))
        if not again:
            return
        key = _shared_key(ChannelKey(REQUEST, answers.dst, answers.src))
        q = self.queues.get(key, ())
        if len(q) + len(again) > self.bound:
            raise ChannelFull(f"channel {key.describe()} over its bound {self.bound} with "
                              f"{len(again)} request(s) sent again")
        self._snap = None
        pair = self._pairs.get(key)
        self.queues[key] = tuple((0, r) for r in again) + q
        encode = self.codec.encode
        self._pairs[key] = (encode(key), tuple(encode((0, r)) for r in again)
                            + (pair[1] if pair else ()))

    def stop_sender(self, src: int, dst: int | None = None) -> int:
        """The controller on ``src`` stops its sender to ``dst`` (None: to every broker), as
        the live channel manager's ``remove_broker`` and ``reset`` do: the queued requests are
        dropped, but the one in flight -- the head -- may already be on the wire and still
        arrives. Returns how many were dropped."""
        lost = 0
        for key in [k for k in self.queues if k.kind == REQUEST and k.src == src
                    and (dst is None or k.dst == dst)]:
            q = self.queues[key]
            if len(q) > 1:
                self._snap = None
                self.queues[key] = q[:1]
                enc_key, enc_q = self._pairs[key]
                self._pairs[key] = (enc_key, enc_q[:1])
                lost += len(q) - 1
        return lost

    def drop(self, kind: str, src: int | None = None, dst: int | None = None) -> int:
        lost = 0
        for key in [k for k in self.queues if k.kind == kind
                    and (src is None or k.src == src) and (dst is None or k.dst == dst)]:
            lost += self.remove(key)
        return lost

    def __len__(self) -> int:
        return sum(len(q) for q in self.queues.values())
