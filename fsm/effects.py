"""Effects: what the controller and the broker core ask the outside world to do.

``handle(event)`` returns a list of effects, in order: ZooKeeper writes come
before the requests that announce them. They are carried out by one driver per
core (``fsm.driver``), over the live shell's ports or the simulated world's. Two
rules bind them:

1. A ``ZkWrite`` from the controller is committed behind a check of
   ``/controller_epoch``'s znode version (``fence_version``): as ZooKeeper
   ``multi`` transactions that each begin with ``check(/controller_epoch,
   fence_version)``. Its ``WriteResult`` must be handed back *before any other
   event*: the controller waits for it (Kafka's event thread blocks on its
   writes), and effects after a ``ZkWrite`` in the same list are those that do
   not depend on it.
2. A failed fence check means the controller was replaced: report
   ``WriteResult(fenced=True)``; the controller resigns. Never retry.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsm.events import TimerKind
from fsm.requests import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ControllerRequest,
    ControllerResponse,
)

# ---------------------------------------------------------------- ZooKeeper operations


@dataclass(frozen=True, slots=True)
class CreateOp:
    path: str
    data: object
    ephemeral: bool = False
    sequential: bool = False
    make_parents: bool = False
    """Create missing parent znodes first (empty data), like kazoo's ``makepath=True`` and
    Kafka's ``createRecursive``; the controller sets it on partition state creates, whose
    ``/brokers/topics/<t>/partitions/<p>`` parents the topic's creator did not write."""


@dataclass(frozen=True, slots=True)
class SetDataOp:
    path: str
    data: object
    version: int  # expected znode version; -1 = any


@dataclass(frozen=True, slots=True)
class DeleteOp:
    path: str
    version: int = -1
    recursive: bool = False  # delete the children first (topic deletion)


@dataclass(frozen=True, slots=True)
class CheckOp:
    path: str
    version: int


ZkOp = CreateOp | SetDataOp | DeleteOp | CheckOp


# ---------------------------------------------------------------- controller effects


@dataclass(frozen=True, slots=True)
class ZkWrite:
    """Conditional writes. ``fence_version`` None only for the election's own transaction
    (which carries its own conditional set of ``/controller_epoch``); the executor may cut
    ``ops`` into size-bounded ``multi`` batches, each fenced."""

    token: int
    ops: tuple[ZkOp, ...]
    fence_version: int | None


@dataclass(frozen=True, slots=True)
class LoadCluster:
    """Read everything (bulk) and answer with ``ClusterLoaded``."""


@dataclass(frozen=True, slots=True)
class SendRequest:
    """Queue ``request`` on the channel to ``broker_id`` (stamped already)."""

    broker_id: int
    request: ControllerRequest


@dataclass(frozen=True, slots=True)
class ReplyControlledShutdown:
    broker_id: int
    correlation: int
    response: ControlledShutdownResponse


@dataclass(frozen=True, slots=True)
class StartTimer:
    kind: TimerKind
    delay_ms: int


@dataclass(frozen=True, slots=True)
class CancelTimer:
    kind: TimerKind


@dataclass(frozen=True, slots=True)
class BecameController:
    """This candidate now is the active controller with ``epoch``: register the watches,
    start the channel manager."""

    epoch: int


@dataclass(frozen=True, slots=True)
class Resigned:
    """This candidate is no longer controller: drop watches, channels, pending work."""

    reason: str


@dataclass(frozen=True, slots=True)
class RemoveBrokerChannel:
    """A broker left: drop its queue (seed 003). The channel manager forgets the broker with
    its channel; a bounced broker is announced again by the driver (``fsm.driver``)."""

    broker_id: int


ControllerEffect = (
    ZkWrite | LoadCluster | SendRequest | ReplyControlledShutdown | StartTimer | CancelTimer
    | BecameController | Resigned | RemoveBrokerChannel
)


# ---------------------------------------------------------------- broker core effects


@dataclass(frozen=True, slots=True)
class BrokerZkWrite:
    """A broker's own writes: conditional on versions, not fenced by the controller epoch
    (ISR updates by a leader, ``/isr_change_notification`` sequence nodes, registration)."""

    token: int
    ops: tuple[ZkOp, ...]


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer a controller request received with ``correlation``."""

    correlation: int
    response: ControllerResponse


@dataclass(frozen=True, slots=True)
class SendControlledShutdown:
    """Send ControlledShutdown to the active controller."""

    request: ControlledShutdownRequest


@dataclass(frozen=True, slots=True)
class Register:
    """Create ``/brokers/ids/<id>`` (ephemeral) and answer with ``BrokerRegistered``."""


@dataclass(frozen=True, slots=True)
class LoadBrokerMetadata:
    """Read assignments and partition states; answer with ``BrokerMetadataLoaded``."""


@dataclass(frozen=True, slots=True)
class Exit:
    """Shutdown finished: close the session (deletes the broker's znode) and exit."""


BrokerEffect = (
    BrokerZkWrite | Respond | SendControlledShutdown | Register | LoadBrokerMetadata
    | StartTimer | CancelTimer | Exit
)
