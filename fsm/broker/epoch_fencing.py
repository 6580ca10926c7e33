"""The two request-level fences a broker applies to every controller request.

Order, as in Kafka (``KafkaApis`` checks the broker epoch before ``ReplicaManager`` checks
the controller epoch):

1. **broker epoch** (KIP-380): the request must be stamped with *this incarnation's* epoch
   (the czxid of its current ``/brokers/ids/<id>``). Anything else -- the previous
   incarnation's epoch after a restart or a session expiry, or an epoch it has not learnt
   -- is answered ``STALE_BROKER_EPOCH`` and not applied. Kafka only rejects older epochs;
   kcontrol rejects every other epoch because the broker always knows its own epoch before
   it serves (requests before ``BrokerRegistered`` are refused anyway).
2. **controller epoch**: a request from a controller epoch lower than the highest this
   broker has applied is answered ``STALE_CONTROLLER_EPOCH``. An equal or higher epoch
   passes and, once the request is applied, becomes the highest seen.
"""

from __future__ import annotations

from fsm.errors import ErrorCode


def epoch_error(own_epoch: int | None, highest_controller_epoch: int,
                broker_epoch: int, controller_epoch: int) -> ErrorCode:
    """``ErrorCode.NONE`` when a request stamped ``(broker_epoch, controller_epoch)`` may be
    applied by a broker with ``own_epoch`` that has seen ``highest_controller_epoch``."""
    if own_epoch is None or broker_epoch != own_epoch:
        return ErrorCode.STALE_BROKER_EPOCH
    if controller_epoch < highest_controller_epoch:
        return ErrorCode.STALE_CONTROLLER_EPOCH
    return ErrorCode.NONE
