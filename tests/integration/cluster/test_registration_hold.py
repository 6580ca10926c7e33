"""A controller request stamped with the epoch a starting broker is about to learn waits for
the registration's answer (``BrokerNode._await_own_epoch``) instead of being refused and
lost; a request for an older incarnation waits too, then the core refuses it. No ZooKeeper:
the node's core is driven by hand, as its executor would."""

from __future__ import annotations

import threading
import time

from adapters.broker import BrokerNode, BrokerSettings
from adapters.network import parse_listener_config
from fsm.broker_states import BrokerState
from fsm.events import BrokerMetadataLoaded, BrokerRegistered, BrokerStarted


def recovering_node() -> BrokerNode:
    node = BrokerNode(BrokerSettings(3, "127.0.0.1:1",
                                     parse_listener_config("PLAINTEXT://127.0.0.1:0")))
    with node.lock:
        node.core.handle(BrokerStarted())
        node.core.handle(BrokerMetadataLoaded((), ()))
    assert node.state is BrokerState.RECOVERY
    return node


def register_later(node: BrokerNode, epoch: int, delay: float) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        with node.core_changed:
            node.core.handle(BrokerRegistered(epoch))
            node.core_changed.notify_all()
    t = threading.Thread(target=run)
    t.start()
    return t


def test_waits_for_the_registration_then_goes_on() -> None:
    node = recovering_node()
    t = register_later(node, 500, 0.3)
    t0 = time.monotonic()
    node._await_own_epoch(500)
    waited = time.monotonic() - t0
    t.join()
    assert node.state is BrokerState.RUNNING and node.epoch == 500
    assert 0.2 < waited < 5.0


def test_an_older_epoch_is_held_then_left_to_the_core() -> None:
    node = recovering_node()
    t = register_later(node, 500, 0.2)
    node._await_own_epoch(400)  # the previous incarnation's: returns once registered
    t.join()
    assert node.epoch == 500  # and the core will answer STALE_BROKER_EPOCH (400 != 500)


def test_the_wait_is_bounded() -> None:
    node = recovering_node()
    node.registration_hold_s = 0.3
    t0 = time.monotonic()
    node._await_own_epoch(500)  # nobody registers
    assert 0.25 < time.monotonic() - t0 < 3.0
    assert node.state is BrokerState.RECOVERY


def test_a_running_broker_does_not_wait() -> None:
    node = recovering_node()
    with node.lock:
        node.core.handle(BrokerRegistered(500))
    t0 = time.monotonic()
    node._await_own_epoch(600)  # not ours, but nothing to wait for: the core decides
    assert time.monotonic() - t0 < 0.1
