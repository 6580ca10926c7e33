"""The controller service's ZooKeeper connection lost and found again (the same session):
what the model checker's world does on ``zk-disconnect`` (``model_check.world.executor``),
the live service does too. The connection is really dropped (the client's socket shut
down: kazoo goes SUSPENDED, then reconnects with the same session); where the outcome of the
request in flight at the drop must be a given one, the test says it at the writer's or the
reader's boundary."""

from __future__ import annotations

import socket

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss
from kazoo.protocol.states import KazooState
from runtime_helpers import SESSION_MS, controller_znode, wait_until

from adapters.controller import ControllerService
from adapters.network.broker_channels import LoggingChannels
from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.events import WriteResult
from fsm.reads.markers import LOAD
from fsm.values import TopicAssignment
from fsm.zk_session_states import ZkClientState

pytestmark = pytest.mark.integration


def drop_connection(client: KazooClient) -> None:
    """Shut the client's socket down: kazoo sees the connection lost (SUSPENDED) and
    reconnects with the same session."""
    client._connection._socket.shutdown(socket.SHUT_RDWR)


def session_moves(records: list) -> list[tuple[str, str]]:
    return [(r.source.value, r.target.value) for r in records if r.kind == "session"]


@pytest.fixture
def new_service(zk_chroot: str):  # noqa: ANN201 -- a factory
    made: list[ControllerService] = []

    def make(broker_id: int) -> ControllerService:
        svc = ControllerService(broker_id, zk_chroot, session_timeout_ms=SESSION_MS,
                                channels=LoggingChannels())
        made.append(svc)
        return svc

    yield make
    for s in made:
        s.stop()


def test_election_applied_but_its_answer_lost_gives_up_controller(
        new_service, zk_client: KazooClient) -> None:
    """The election's transaction reaches the ensemble, the connection drops before the
    answer: the writer reports it fenced, the core lost the election -- yet /controller is
    its session's, which lives on. Without giving /controller up, nobody would ever be
    controller. Once reconnected the service deletes it and is elected again."""
    svc = new_service(1)
    real = svc.writer.execute
    lost: list[int] = []
    states: list[str] = []
    svc.client.add_listener(states.append)

    def execute(write):  # noqa: ANN001, ANN202
        result = real(write)
        if write.fence_version is None and not lost and not result.fenced \
                and not result.failures:
            lost.append(write.token)
            drop_connection(svc.client)  # the answer goes with the connection
            svc.writer.fence_reason = "connection lost while the election was in flight"
            return WriteResult(write.token, fenced=True)
        return result

    svc.writer.execute = execute  # type: ignore[method-assign]
    svc.start()
    wait_until(lambda: lost, 20, "the first election applied, its answer lost")
    wait_until(lambda: svc.is_active, 30, "elected again after reconnecting")
    assert KazooState.SUSPENDED in states  # the connection really was lost
    cid, epoch, _ = controller_znode(zk_client)
    assert (cid, epoch) == (1, svc.epoch) and svc.epoch == 2  # epoch 1 was the lost one
    assert svc.elections == [2]


def test_cluster_load_failing_on_a_lost_connection_is_held(
        new_service, make_broker, zk_client: KazooClient) -> None:
    """The controller is elected, the connection is lost as it reads the cluster: the load
    is held and done once CONNECTED (not lost: an active controller that never loaded would
    decide nothing). The session moves the core logged are the table's."""
    make_broker(1)
    svc = new_service(1)
    real = svc.reader.materialize
    failed: list[bool] = []

    def materialize(marker, **kw):  # noqa: ANN001, ANN003, ANN202
        if marker.kind == LOAD and not failed:  # the cluster load
            failed.append(True)
            drop_connection(svc.client)
            raise ConnectionLoss()
        return real(marker, **kw)

    svc.reader.materialize = materialize  # type: ignore[method-assign]
    records: list = []
    drain = svc.controller.drain_state_change_log

    def keep() -> list:
        out = drain()
        records.extend(out)
        return out

    svc.controller.drain_state_change_log = keep  # type: ignore[method-assign]
    svc.start()
    wait_until(lambda: failed, 20, "the load failed on the lost connection")
    wait_until(lambda: svc.is_active and svc.last_load_s is not None, 30,
               "the cluster loaded after reconnecting")
    path = P.topic("t")
    zk_client.create(path, codec.encode(path, TopicAssignment.of({0: [1]})))
    wait_until(lambda: zk_client.exists(P.partition_state("t", 0)), 30,
               "the topic created by the loaded controller")
    assert svc.controller.session_state is ZkClientState.CONNECTED
    assert session_moves(records) == [
        ("NOT_CONNECTED", "CONNECTING"), ("CONNECTING", "CONNECTED"),  # Startup
        ("CONNECTED", "CONNECTING"), ("CONNECTING", "CONNECTED")]  # lost and found
    assert not svc.resignations
