"""A 3-broker cluster of real ``kcontrol broker`` processes on the session ensemble (one
cluster for the module, in its own chroot): election, metadata on every broker, the control
and data planes, kill -9 of the controller's broker and its return, controlled shutdown."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import urllib.request
from pathlib import Path

import pytest
from cluster_helpers import (
    assert_audit_passes,
    brokers_agree_with_zk,
    has_topic,
    partitions_in_zk,
    settled,
    wait_until,
    zk_state,
)
from kazoo.client import KazooClient
from kazoo.recipe.watchers import DataWatch

from adapters.admin import topics
from adapters.cluster import Cluster
from adapters.host import thread_priority as priority
from adapters.network import WireClient
from adapters.network.codec import ApiKey
from adapters.network.codec import convert as C
from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.requests import UpdateMetadataRequest
from fsm.values import LeaderAndIsr

pytestmark = pytest.mark.integration

TOPIC = "orders"
HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def topic(cluster: Cluster, observer: KazooClient) -> str:
    """6 partitions, replication factor 3: every broker leads two."""
    cluster.wait_ready(60)
    topics.create_topic(observer, TOPIC, 6, 3, start_index=0)
    wait_until(lambda: (st := settled(cluster, observer)) and has_topic(st, TOPIC), 30,
               "the topic's leaders and ISR in every broker's metadata")
    return TOPIC


def stale_update_metadata() -> dict:
    """An UpdateMetadata for another incarnation (broker epoch 1): answered, never applied."""
    return C.update_metadata_request_to_wire(UpdateMetadataRequest(9, 1000, 1, (), ()))


def test_one_controller_every_broker_in_every_metadata(ready: Cluster,
                                                       observer: KazooClient) -> None:
    st = ready.status()
    assert st.ready, st.problems()
    zs = zk_state(observer)
    assert zs.controller is not None and zs.controller.broker_id == st.controller
    assert sorted(zs.broker_ids) == [1, 2, 3]
    for row in st.brokers:  # registered with the bound endpoints, epoch = czxid
        assert row.epoch == zs.broker_epochs[row.id]
        b = ready.brokers[row.id]
        assert {(e.listener, e.port) for e in zs.brokers[row.id].endpoints} == {
            ("CONTROLLER", b.control_port), ("PLAINTEXT", b.data_port)}
        assert row.sees == (1, 2, 3) and row.sees_controller == st.controller
    url = f"http://{HOST}:{ready.brokers[st.controller].metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as resp:
        text = resp.read().decode()
    for name in ("kafka_controller_KafkaController_ActiveControllerCount 1.0",
                 "kafka_server_KafkaServer_BrokerState 3.0",
                 "kafka_network_RequestChannel_RequestQueueSize ",
                 "kafka_network_RequestChannel_ControlPlaneRequestQueueSize ",
                 "kafka_server_KafkaRequestHandlerPool_RequestHandlerAvgIdlePercent ",
                 "kafka_server_KafkaRequestHandlerPool_ControlPlaneRequestHandlerIdlePercent ",
                 'kafka_controller_ControllerChannelManager_QueueSize{broker_id="1"}'):
        assert name in text, name
    # issue 22: each broker's state changes in DIR/broker-<id>/state-change.log, not in its
    # server log; the controller's too
    for bid, b in ready.brokers.items():
        changes = b.state_change_log.read_text(errors="replace")
        assert " kcontrol.broker.state.change: " in changes, bid
        server = b.log_file.read_text(errors="replace")
        assert "state.change" not in server, bid
    changes = ready.brokers[st.controller].state_change_log.read_text(errors="replace")
    assert " kcontrol.state.change: " in changes and "elected with epoch" in changes


def test_topic_leaders_and_isr_in_every_brokers_metadata(ready: Cluster, observer: KazooClient,
                                                         topic: str) -> None:
    st = wait_until(lambda: brokers_agree_with_zk(ready, observer), 30, "agreement")
    parts = {tp: v for tp, v in partitions_in_zk(st).items() if tp[0] == topic}
    assert sorted(p for _, p in parts) == list(range(6))
    for leader, _epoch, isr, replicas in parts.values():
        assert leader in replicas and sorted(isr) == sorted(replicas) and len(replicas) == 3


def test_planes_take_only_their_apis(ready: Cluster) -> None:
    b = ready.brokers[1]
    with WireClient(HOST, b.data_port) as c:
        versions = c.request(ApiKey.API_VERSIONS, 0, {})
    keys = {k["api_key"] for k in versions["api_keys"]}
    assert {ApiKey.METADATA, ApiKey.CONTROLLED_SHUTDOWN, ApiKey.API_VERSIONS} <= keys
    assert not keys & {ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA}
    with WireClient(HOST, b.data_port) as c, pytest.raises(ConnectionError):
        c.request(ApiKey.UPDATE_METADATA, 5, stale_update_metadata())
    with WireClient(HOST, b.control_port) as c:
        answer = c.request(ApiKey.UPDATE_METADATA, 5, stale_update_metadata())
        assert answer["error_code"] == 77  # STALE_BROKER_EPOCH: fenced, not applied
    with WireClient(HOST, b.control_port) as c, pytest.raises(ConnectionError):
        c.metadata(version=1)
    with WireClient(HOST, b.data_port) as c:  # the data plane still serves clients
        assert sorted(x["node_id"] for x in c.metadata()["brokers"]) == [1, 2, 3]


def test_kill_controller_then_restart(ready: Cluster, observer: KazooClient, topic: str) -> None:
    before = wait_until(lambda: settled(ready, observer), 30, "a settled cluster")
    assert before.controller is not None
    victim = before.controller.broker_id
    led = {tp: s.leader_and_isr for tp, s in before.partition_states.items()
           if s.leader_and_isr.leader == victim}
    assert led, "the controller's broker leads partitions"
    ready.kill_broker(victim, signal.SIGKILL)
    assert ready.wait_stopped(victim, 10)
    ready.forget(victim)
    try:
        def moved():  # noqa: ANN202
            st = brokers_agree_with_zk(ready, observer)
            if st is None or st.controller is None or st.controller.broker_id == victim:
                return None
            if any(s.leader_and_isr.leader in (victim, -1) for s in st.partition_states.values()):
                return None
            return st

        st = wait_until(moved, 30, "a new controller and new leaders in every broker's metadata")
        assert st.controller_epoch > before.controller_epoch
        for tp, old in led.items():
            now = st.partition_states[tp].leader_and_isr
            assert now.leader != victim and victim not in now.isr
            assert now.leader_epoch > old.leader_epoch
        assert_audit_passes(observer)
    finally:
        ready.start_broker(victim)
    back = wait_until(lambda: settled(ready, observer), 60,
                      "the broker back, registered and in every ISR again")
    assert back.broker_epochs[victim] > before.broker_epochs[victim]
    assert_audit_passes(observer)


def test_sigterm_moves_leadership_before_exit(ready: Cluster, observer: KazooClient,
                                              topic: str) -> None:
    st = wait_until(lambda: settled(ready, observer), 30, "a settled cluster")
    assert st.controller is not None
    leading = {b: [tp for tp, s in st.partition_states.items() if s.leader_and_isr.leader == b]
               for b in ready.brokers}
    victim = next((b for b in sorted(leading) if leading[b] and b != st.controller.broker_id),
                  st.controller.broker_id)
    led = leading[victim]
    assert led
    # the zxid of the write that first took leadership away from the victim, per partition
    moved_at: dict[tuple[str, int], int] = {}
    lock = threading.Lock()

    def watcher(tp: tuple[str, int]):  # noqa: ANN202
        def on_change(data: bytes | None, stat) -> bool:  # noqa: ANN001
            if data is None:
                return False
            li = codec.decode(P.partition_state(*tp), data)
            if isinstance(li, LeaderAndIsr) and li.leader != victim:
                with lock:
                    moved_at.setdefault(tp, stat.mzxid)
                return False  # stop watching
            return True
        return on_change

    for tp in led:
        DataWatch(observer, P.partition_state(*tp), watcher(tp))
    ready.kill_broker(victim, signal.SIGTERM)
    try:
        assert ready.wait_stopped(victim, 20), "the broker exits after its controlled shutdown"
        assert ready.exit_codes.get(victim) == 0
        ready.forget(victim)

        def deregistered() -> int | None:
            observer.sync(P.BROKER_IDS)
            if str(victim) in observer.get_children(P.BROKER_IDS):
                return None
            return observer.exists(P.BROKER_IDS).pzxid  # the zxid of the znode's deletion

        closed_at = wait_until(deregistered, 10, f"/brokers/ids/{victim} deleted")
        wait_until(lambda: len(moved_at) == len(led), 10, "the leadership moves seen")
        for tp in led:
            assert moved_at[tp] < closed_at, f"{tp} moved only after the broker left"
        changes = ready.brokers[victim].state_change_log.read_text()  # the lifecycle moves
        assert "RUNNING -> PENDING_CONTROLLED_SHUTDOWN" in changes
        assert "PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN" in changes
        assert "retries exhausted" not in ready.brokers[victim].log_file.read_text()
        assert_audit_passes(observer)
    finally:
        ready.forget(victim)
        ready.start_broker(victim)
    wait_until(lambda: settled(ready, observer), 60, "the broker back in every ISR")
    assert_audit_passes(observer)


def _fifo_threads(pid: int) -> int:
    """How many threads of ``pid`` run at SCHED_FIFO (field 41 of /proc/<pid>/task/<tid>/stat)."""
    n = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            n += int(fields[38]) == os.SCHED_FIFO  # fields[0] is field 3 (state)
    return n


@pytest.mark.skipif(priority.available() is not None, reason="real-time priority not permitted")
def test_only_the_control_plane_threads_run_at_real_time_priority(ready: Cluster,
                                                                  observer: KazooClient) -> None:
    """Every broker's control-plane listener and handler run at SCHED_FIFO; on the controller's broker
    its senders (one per live broker) do too; nothing else does (the data plane, ZooKeeper
    sessions and the controller's event thread keep ordinary priority)."""
    znode = zk_state(observer).controller
    assert znode is not None
    controller = znode.broker_id
    expected = {b: 2 + (3 if b == controller else 0) for b in ready.brokers}
    wait_until(lambda: {b: _fifo_threads(p.pid) for b, p in ready.brokers.items()
                        if p.pid is not None} == expected, 30,
               f"SCHED_FIFO threads per broker to be {expected}")
