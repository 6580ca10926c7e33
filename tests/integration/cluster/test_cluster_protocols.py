"""Seed 000's protocols across real ``kcontrol broker`` processes (one 3-broker cluster for the
module, on the session ensemble), with the live audit -- ZooKeeper's invariants and every
broker's metadata read over the wire -- passing after each step: topic creation, partition
expansion and deletion; reassignment; broker kill -9, restart and preferred election; and a
broker restarted during its own controlled shutdown (KIP-380), which never applies a request
meant for its previous incarnation. (The controller's broker killed and SIGTERM's controlled
shutdown are in ``test_cluster_brokers``, audited there the same way.)"""

from __future__ import annotations

import os
import re
import signal

import pytest
from click.testing import CliRunner
from cluster_helpers import (
    assert_audit_passes,
    brokers_agree_with_zk,
    has_topic,
    metadata,
    partitions_in_metadata,
    scrape,
    settled,
    wait_until,
    zk_state,
)
from kazoo.client import KazooClient

from adapters.admin import elect, reassign, topics
from adapters.cli import main
from adapters.cluster import Cluster
from adapters.network import WireClient
from adapters.network.codec import ApiKey
from adapters.network.codec import convert as C
from fsm import zk_paths as P
from fsm.requests import StopReplicaRequest

pytestmark = pytest.mark.integration

HOST = "127.0.0.1"
PENDING = 6  # kafka_server_KafkaServer_BrokerState of PENDING_CONTROLLED_SHUTDOWN


def in_every_broker(cluster: Cluster, client: KazooClient, cond) -> object:  # noqa: ANN001
    """A settled cluster (every broker agreeing with ZooKeeper, full ISRs) where ``cond(st)``."""
    st = settled(cluster, client)
    return st if st is not None and cond(st) else None


def test_topic_create_expand_delete(ready: Cluster, observer: KazooClient) -> None:
    topics.create_topic(observer, "grow", 3, 3)
    wait_until(lambda: in_every_broker(ready, observer, lambda st: has_topic(st, "grow")), 30,
               "the new topic's leaders in every broker's metadata")
    assert_audit_passes(observer)

    topics.add_partitions(observer, "grow", 6)
    st = wait_until(lambda: in_every_broker(
        ready, observer, lambda st: sum(t == "grow" for t, _ in st.partition_states) == 6),
        30, "six partitions in every broker's metadata")
    for p in range(6):
        li = st.partition_states[("grow", p)].leader_and_isr
        assert li.leader in dict(st.topics["grow"].partitions)[p]
    assert_audit_passes(observer)

    assert topics.delete_topic(observer, "grow")

    def gone() -> bool:
        st = brokers_agree_with_zk(ready, observer)
        return (st is not None and "grow" not in st.topics and not st.topics_to_delete
                and not any(t == "grow" for t, _ in st.partition_states))

    wait_until(gone, 60, "the topic gone from ZooKeeper and from every broker's metadata")
    for b in ready.brokers:
        md = metadata(ready.brokers[b].data_port)
        assert md is not None and not any(t == "grow" for t, _ in partitions_in_metadata(md))
    assert_audit_passes(observer)


def test_reassignment_moves_a_partition(ready: Cluster, observer: KazooClient) -> None:
    topics.create_topic(observer, "moves", None, None, {0: (1, 2), 1: (2, 3)})
    wait_until(lambda: in_every_broker(ready, observer, lambda st: has_topic(st, "moves")), 30,
               "the topic in every broker's metadata")
    reassign.execute(observer, ((("moves", 0), (3, 1)),))

    def moved(st) -> bool:  # noqa: ANN001
        return (st.reassignment is None
                and dict(st.topics["moves"].partitions)[0] == (3, 1))

    st = wait_until(lambda: in_every_broker(ready, observer, moved), 60,
                    "moves-0 on brokers 3 and 1, in ZooKeeper and every broker's metadata")
    li = st.partition_states[("moves", 0)].leader_and_isr
    assert li.leader in (3, 1) and sorted(li.isr) == [1, 3]
    assert dict(st.topics["moves"].partitions)[1] == (2, 3)  # untouched
    assert_audit_passes(observer)
    r = CliRunner().invoke(main, ["audit", "--zookeeper", ready.zookeeper, "--brokers"])
    assert r.exit_code == 0, r.output
    assert "all invariants hold" in r.output


def test_kill9_restart_then_preferred_election(ready: Cluster, observer: KazooClient) -> None:
    st = wait_until(lambda: settled(ready, observer), 30, "a settled cluster")
    assert st.controller is not None
    victim = next(b for b in sorted(ready.brokers) if b != st.controller.broker_id)
    others = [b for b in sorted(ready.brokers) if b != victim]
    topics.create_topic(observer, "prefer", None, None,
                        {0: (victim, *others), 1: (others[0], victim, others[1])})
    before = wait_until(lambda: in_every_broker(ready, observer, lambda s: has_topic(s, "prefer")),
                        30, "the topic in every broker's metadata")
    assert before.partition_states[("prefer", 0)].leader_and_isr.leader == victim

    ready.kill_broker(victim, signal.SIGKILL)
    assert ready.wait_stopped(victim, 10)
    ready.forget(victim)
    try:
        def failed_over(s) -> bool:  # noqa: ANN001
            li = s.partition_states[("prefer", 0)].leader_and_isr
            return victim not in s.broker_ids and li.leader in others and victim not in li.isr

        wait_until(lambda: (s := brokers_agree_with_zk(ready, observer)) and failed_over(s), 30,
                   "prefer-0 led by another broker once the victim's session expired")
        assert_audit_passes(observer)
    finally:
        ready.start_broker(victim)
    back = wait_until(lambda: in_every_broker(ready, observer, lambda s: victim in s.broker_ids),
                      60, "the victim back, registered and in every ISR again")
    assert back.broker_epochs[victim] > before.broker_epochs[victim]
    assert back.partition_states[("prefer", 0)].leader_and_isr.leader != victim
    assert_audit_passes(observer)

    elect.start_election(observer, (("prefer", 0),))

    def preferred(s) -> bool:  # noqa: ANN001
        return (s.preferred_election is None
                and s.partition_states[("prefer", 0)].leader_and_isr.leader == victim)

    after = wait_until(lambda: in_every_broker(ready, observer, preferred), 30,
                       "prefer-0 led by its preferred replica again, in every broker's metadata")
    li = after.partition_states[("prefer", 0)].leader_and_isr
    assert li.leader_epoch > back.partition_states[("prefer", 0)].leader_and_isr.leader_epoch
    assert_audit_passes(observer)


def _log_since_start(cluster: Cluster, broker: int) -> str:
    """The broker's log from its latest start on (the file is appended across restarts)."""
    text = cluster.brokers[broker].log_file.read_text(errors="replace")
    starts = [m.start() for m in re.finditer(r"listening on ", text)]
    return text[starts[-1]:] if starts else text


def test_restart_during_controlled_shutdown_never_applies_the_old_epoch(
        ready: Cluster, observer: KazooClient) -> None:
    """Seed 000 "controller-to-broker requests are not broker-generation-aware" (KIP-380): the
    broker is killed while its controlled shutdown is with the controller and restarted at
    once, same id and ports; the controller, which still knows the old incarnation, then
    shrinks ISRs and stops replicas stamped with the old epoch -- the new process must refuse
    them all (STALE_BROKER_EPOCH) and apply only what is stamped with its own epoch."""
    topics.create_topic(observer, "fenced", 6, 3)
    st = wait_until(lambda: in_every_broker(ready, observer, lambda s: has_topic(s, "fenced")), 30,
                    "the topic in every broker's metadata")
    assert st.controller is not None
    controller = st.controller.broker_id
    victim = next(b for b in sorted(ready.brokers) if b != controller)
    old_epoch = st.broker_epochs[victim]
    follows = [tp for tp, s in st.partition_states.items()
               if tp[0] == "fenced" and s.leader_and_isr.leader != victim]
    assert follows
    controller_pid = ready.brokers[controller].pid
    assert controller_pid is not None

    # Freeze the controller's process (well under its 4 s session), so the victim's
    # ControlledShutdown waits in the controller's socket while the victim is killed.
    os.kill(controller_pid, signal.SIGSTOP)
    try:
        ready.kill_broker(victim, signal.SIGTERM)
        wait_until(lambda: scrape(ready.brokers[victim].metrics_port).get(
            "kafka_server_KafkaServer_BrokerState") == PENDING, 5,
            "the victim in PENDING_CONTROLLED_SHUTDOWN")
        wait_until(lambda: f"asking controller {controller}" in _log_since_start(ready, victim),
                   5, "the victim's ControlledShutdown sent")
        ready.kill_broker(victim, signal.SIGKILL)
        assert ready.wait_stopped(victim, 5)
        ready.forget(victim)
        state_log = ready.brokers[victim].state_change_log
        since = state_log.stat().st_size if state_log.exists() else 0
        ready.start_broker(victim)
    finally:
        os.kill(controller_pid, signal.SIGCONT)

    back = wait_until(lambda: in_every_broker(ready, observer, lambda s: victim in s.broker_ids
                                              and s.broker_epochs[victim] != old_epoch),
                      60, "the restarted victim registered and settled")
    new_epoch = back.broker_epochs[victim]
    assert new_epoch > old_epoch
    assert_audit_passes(observer)

    metrics_port = ready.brokers[victim].metrics_port
    stale = "STALE_BROKER_EPOCH"
    seen = scrape(metrics_port)
    organic = sum(v for k, v in seen.items()
                  if k.startswith("kcontrol_broker_controller_requests_total") and stale in k)
    assert organic >= 1, "the controller's requests for the old incarnation reached the new one"

    # the seed's example, replayed on purpose: a StopReplica for a partition the victim
    # follows, stamped with its previous epoch and the current controller epoch
    stop = StopReplicaRequest(controller, back.controller_epoch or 0, old_epoch, False,
                              tuple(follows[:1]))
    with WireClient(HOST, ready.brokers[victim].control_port) as c:
        answer = c.request(ApiKey.STOP_REPLICA, 1, C.stop_replica_request_to_wire(stop))
    assert answer["error_code"] == 77

    seen = scrape(metrics_port)
    assert seen['kcontrol_broker_controller_requests_total{api="StopReplica",result="'
                + stale + '"}'] >= 1
    assert seen["kcontrol_broker_foreign_epoch_applied_total"] == 0
    assert any(k.startswith("kcontrol_broker_controller_requests_total") and 'result="applied"'
               in k and v > 0 for k, v in seen.items())
    assert seen["kafka_server_KafkaServer_BrokerState"] == 3  # RUNNING
    changes = state_log.read_bytes()[since:].decode(errors="replace")  # the new process's
    rejected = re.findall(r"STALE_BROKER_EPOCH: stamped broker epoch (\d+)", changes)
    assert rejected and {int(e) for e in rejected} == {old_epoch}
    log = _log_since_start(ready, victim)
    assert "STALE_BROKER_EPOCH: stamped" not in log  # state changes are in state-change.log
    assert "applied by a broker with epoch" not in log
    # nothing was stopped by the replayed request: the victim still serves the partition
    # as a member of its ISR, in ZooKeeper and in every broker's metadata
    final = wait_until(lambda: settled(ready, observer), 30, "a settled cluster")
    for tp in follows:
        assert victim in final.partition_states[tp].leader_and_isr.isr
    zs = zk_state(observer)
    assert zs.broker_epochs[victim] == new_epoch
    observer.sync(P.broker(victim))
    assert observer.exists(P.broker(victim)).czxid == new_epoch
