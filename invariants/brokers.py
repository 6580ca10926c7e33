"""Broker-side fencing: what a broker may apply."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import STATE, TRANSITION, invariant
from invariants.view import GlobalView


def a_broker_applied_a_request(view: GlobalView) -> bool:
    """A broker has applied a controller request in its current incarnation."""
    return any(b.applied is not None for b in view.brokers or ())


def a_request_applied_now(before: GlobalView, after: GlobalView) -> bool:
    """A running broker applied a controller request in the step."""
    for b in after.brokers or ():
        ob = before.broker(b.broker_id)
        if ob is not None and ob is not b and b.applied is not None and ob.up and b.up \
                and b.applied != ob.applied:
            return True
    return False


def a_broker_stopped_on_its_answer(view: GlobalView) -> bool:
    """A broker stopped because its controlled shutdown was answered."""
    return view.zk is not None and any(b.shut_down and not b.up for b in view.brokers or ())


@invariant(STATE, "seed 000 'make controller-to-broker requests broker-generation-aware'; "
           "KIP-380", premise=a_broker_applied_a_request)
def no_request_applied_across_epochs(view: GlobalView) -> Iterator[str]:
    """The last controller request a broker applied was stamped with *this* incarnation's
    broker epoch, and came from a controller epoch at least as high as every one it had
    applied before.

    Seed 000: a broker restarting in the middle of its own controlled shutdown may act on
    its previous generation's StopReplica and leave a replica offline for good; hence every
    request carries the broker epoch (czxid of ``/brokers/ids/<id>``) and a broker rejects
    any other. Requests from an older controller epoch come from a deposed controller and
    must be rejected (STALE_CONTROLLER_EPOCH). The mark is kept per incarnation, so one
    snapshot suffices.
    """
    for b in view.brokers or ():
        a = b.applied
        if a is None:
            continue
        if a.broker_epoch != b.epoch:
            yield (f"broker {b.broker_id} (epoch {b.epoch}) applied a request for broker "
                   f"epoch {a.broker_epoch}")
        if a.controller_epoch < a.highest_before:
            yield (f"broker {b.broker_id} applied a request from controller epoch "
                   f"{a.controller_epoch} after one from {a.highest_before}")


@invariant(TRANSITION, "seed 000 'broker generation'; KIP-380; KAFKA-6082",
           premise=a_request_applied_now)
def newly_applied_request_is_current(before: GlobalView, after: GlobalView) -> Iterator[str]:
    """A request a running broker applies in a step carries the broker epoch it has after
    the step and a controller epoch no lower than the highest it had applied before the step.

    The step-wise form of ``no_request_applied_across_epochs``: it does not rely on the
    broker's own ``highest_before`` bookkeeping, but on the two consecutive views.
    """
    for b in after.brokers or ():
        ob = before.broker(b.broker_id)
        a = b.applied
        if ob is None or ob is b or a is None or not (ob.up and b.up) or a == ob.applied:
            continue
        if a.broker_epoch != b.epoch:
            yield (f"broker {b.broker_id} (epoch {b.epoch}) applied a request for broker "
                   f"epoch {a.broker_epoch}")
        if a.controller_epoch < ob.controller_epoch:
            yield (f"broker {b.broker_id} applied a request from controller epoch "
                   f"{a.controller_epoch} having applied {ob.controller_epoch}")


@invariant(STATE, "seed 000 'controlled shutdown' (leaders move before the broker stops)",
           premise=a_broker_stopped_on_its_answer)
def controlled_shutdown_moved_leadership(view: GlobalView) -> Iterator[str]:
    """A broker that stopped because its controlled shutdown was answered "nothing
    remaining" is not the leader, in ZooKeeper, of a partition with another in-sync replica
    that is registered (live).

    Controlled shutdown exists so that a planned stop costs no availability: the controller
    moves every leadership the broker holds to another in-sync replica (and takes the
    broker out of the ISRs) and answers only once those writes committed; the broker stops
    on that answer. Stopping while still the recorded leader leaves the partition without
    a serving leader until the controller notices the broker is gone -- the unavailability
    controlled shutdown is meant to avoid. A partition whose ISR has no other live member
    cannot move; the controller reports it as remaining and the broker does not stop on
    that answer (only once its retries run out, which this does not judge).
    """
    zk = view.zk
    if zk is None:
        return
    stopped = {b.broker_id for b in view.brokers or () if b.shut_down and not b.up}
    if not stopped:
        return
    for tp, st in zk.partitions:
        if st.leader in stopped:
            others = [m for m in st.isr if m != st.leader and m in zk.registered]
            if others:
                yield (f"{tp[0]}-{tp[1]}: broker {st.leader} stopped after its controlled "
                       f"shutdown but is still the leader (live ISR replicas {others})")
