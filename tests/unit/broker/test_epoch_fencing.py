"""Request-level fences: the broker epoch (KIP-380) and the controller epoch."""

from __future__ import annotations

from fsm.broker.epoch_fencing import epoch_error
from fsm.broker_states import BrokerState
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerCrashed,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    ShutdownRequested,
)

from .builders import (
    CE,
    EPOCH,
    TP,
    lai,
    lai_request,
    loaded,
    running,
    send,
    stop_request,
    um,
    um_request,
)


def test_stale_controller_epoch_rejected_state_unchanged() -> None:
    core = running()
    assert send(core, lai_request(lai(), controller_epoch=CE)).error is ErrorCode.NONE
    before = core.snapshot()
    newer_state = lai(leader=2, leader_epoch=9, zk_version=9)
    for request in (lai_request(newer_state, controller_epoch=CE - 1),
                    stop_request(TP, delete=True, controller_epoch=CE - 1),
                    um_request(um(), controller_epoch=CE - 1)):
        response = send(core, request)
        assert response.error is ErrorCode.STALE_CONTROLLER_EPOCH
        assert core.snapshot() == before
    assert core.controller_epoch == CE
    assert core.believes_leader(TP)


def test_stale_controller_answer_names_every_partition() -> None:
    core = running()
    send(core, lai_request(controller_epoch=CE))
    response = send(core, lai_request(lai(("b", 1)), lai(("a", 0)), controller_epoch=CE - 1))
    assert response.partition_errors == ((("a", 0), ErrorCode.STALE_CONTROLLER_EPOCH),
                                         (("b", 1), ErrorCode.STALE_CONTROLLER_EPOCH))


def test_equal_and_higher_controller_epochs_are_applied_and_recorded() -> None:
    core = running()
    assert core.controller_epoch == 0
    assert send(core, um_request(controller_epoch=3)).error is ErrorCode.NONE
    assert core.controller_epoch == 3
    assert send(core, um_request(controller_epoch=3)).error is ErrorCode.NONE
    assert send(core, um_request(controller_epoch=8)).error is ErrorCode.NONE
    assert core.controller_epoch == 8
    assert core.applied is not None and core.applied.controller_epoch == 8
    assert core.applied.highest_before == 3 and core.applied_ok()
    assert [r.controller_epoch for r in core.applied_log] == [3, 3, 8]


def test_other_broker_epoch_rejected_older_and_newer() -> None:
    core = running(epoch=EPOCH)
    before = core.snapshot()
    for stamped in (EPOCH - 1, EPOCH + 1, -1):
        for request in (lai_request(lai(), broker_epoch=stamped),
                        stop_request(TP, broker_epoch=stamped),
                        um_request(um(), broker_epoch=stamped)):
            assert send(core, request).error is ErrorCode.STALE_BROKER_EPOCH
    assert core.snapshot() == before
    assert core.controller_epoch == 0  # a rejected request does not teach the epoch


def test_broker_epoch_is_checked_before_controller_epoch() -> None:
    core = running()
    send(core, um_request(controller_epoch=CE))
    response = send(core, um_request(broker_epoch=EPOCH - 1, controller_epoch=CE - 1))
    assert response.error is ErrorCode.STALE_BROKER_EPOCH
    assert epoch_error(None, 0, 5, 5) is ErrorCode.STALE_BROKER_EPOCH
    assert epoch_error(5, 3, 5, 2) is ErrorCode.STALE_CONTROLLER_EPOCH
    assert epoch_error(5, 3, 5, 3) is ErrorCode.NONE


def _leader_replica_after_restart(restart: str):
    """Seed 000 / KIP-380: broker 1 starts a controlled shutdown with epoch 100, restarts
    (crash + start, or session expiry) and registers with epoch 200; the controller's
    StopReplica for the old incarnation arrives now."""
    meta = loaded({"t": {0: (1, 2, 3)}}, {TP: (1, 1, (1, 2, 3), 1)})
    core = running(epoch=100, meta=meta)
    core.handle(ShutdownRequested(controlled=True))
    assert core.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    if restart == "crash":
        core.handle(BrokerCrashed())
        core.handle(BrokerStarted())
    else:
        core.handle(BrokerSessionExpired())
    core.handle(meta)
    core.handle(BrokerRegistered(200))
    return core


def test_seed_restart_during_controlled_shutdown_old_stop_replica_rejected() -> None:
    for restart in ("crash", "expiry"):
        core = _leader_replica_after_restart(restart)
        assert core.epoch == 200
        for delete in (False, True):
            response = send(core, stop_request(TP, delete=delete, broker_epoch=100))
            assert response.error is ErrorCode.STALE_BROKER_EPOCH
            assert response.partition_errors == ((TP, ErrorCode.STALE_BROKER_EPOCH),)
        view = core.replica(TP)
        assert view is not None and view.role.value == "leader"
        assert core.believes_leader(TP)
        # the same request for the new incarnation is applied
        assert send(core, stop_request(TP, broker_epoch=200)).error is ErrorCode.NONE
        assert not core.believes_leader(TP)


def test_controller_epoch_survives_session_expiry_not_crash() -> None:
    core = running()
    send(core, um_request(controller_epoch=9))
    core.handle(BrokerSessionExpired())
    core.handle(loaded())
    core.handle(BrokerRegistered(EPOCH + 1))
    assert core.controller_epoch == 9
    assert core.applied is None
    assert send(core, um_request(broker_epoch=EPOCH + 1, controller_epoch=8)).error \
        is ErrorCode.STALE_CONTROLLER_EPOCH
    core.handle(BrokerCrashed())
    assert core.controller_epoch == 0
