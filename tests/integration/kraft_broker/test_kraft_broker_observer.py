"""The broker's observer of the metadata quorum against three voter processes hosting the
controller: it finds and follows the leader (not a voter: the voters' statuses never count
it), and the committed records -- a broker registered through the active controller --
reach the broker as MetadataFetched in log order, up to the high watermark."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from adapters.kraft_broker.args import broker_settings
from adapters.kraft_broker.observer import MetadataObserver
from adapters.raft_node.args import DEFAULT_CLUSTER_ID
from adapters.raft_node.launcher import LocalQuorum
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.broker.events import MetadataFetched
from fsm.kraft.records.values import RegisterBrokerRecord

pytestmark = pytest.mark.integration

ELECTION_MS = 500
WAIT_S = 20.0


def test_the_observer_follows_the_leader_and_hands_over_committed_records(
        tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path / "quorum", controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS)
    voters = {n: ("127.0.0.1", v.port) for n, v in q.voters.items()}
    events: list[object] = []
    leaders: list[int] = []
    lock = threading.Lock()

    def publish(e: object) -> None:
        with lock:
            events.append(e)

    settings = broker_settings(100, voters, ("127.0.0.1", 0), tmp_path / "b100",
                               controller_quorum_fetch_timeout_ms=4 * ELECTION_MS)
    observer = MetadataObserver(settings, DEFAULT_CLUSTER_ID, publish,
                                lambda leader, epoch: leaders.append(leader))
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        observer.start()
        q.wait_for("the controller active", lambda _: leader.request("brokers")["active"],
                   WAIT_S)
        reg = leader.request("register_broker", broker_id=7)
        assert reg["error"] == "NONE", reg
        hw = leader.request("status")["high_watermark"]
        deadline = time.monotonic() + WAIT_S
        while True:
            with lock:
                got = [r for e in events if isinstance(e, MetadataFetched) for r in e.records]
                offsets = [(e.base_offset, len(e.records)) for e in events
                           if isinstance(e, MetadataFetched)]
            if sum(n for _, n in offsets) >= hw:
                break
            assert time.monotonic() < deadline, (offsets, hw, observer.status)
            time.sleep(0.02)
        # contiguous from 0, in log order, the registration among them
        at = 0
        for base, n in offsets:
            assert base == at
            at += n
        assert [r.broker_id for r in got if isinstance(r, RegisterBrokerRecord)] == [7]
        assert leaders[-1] == leader.node_id
        st = observer.status
        assert st is not None and st.leader_id == leader.node_id and st.role.value == "follower"
    finally:
        observer.stop()
        q.stop()


def test_an_observer_behind_the_log_start_installs_the_snapshot_and_restarts_from_it(
        tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path / "quorum", controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS,
                    extra_args=("--snapshot-every", "10"))
    voters = {n: ("127.0.0.1", v.port) for n, v in q.voters.items()}
    settings = broker_settings(100, voters, ("127.0.0.1", 0), tmp_path / "b100",
                               controller_quorum_fetch_timeout_ms=4 * ELECTION_MS)
    q.start()
    observer = None
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the controller active", lambda _: leader.request("brokers")["active"],
                   WAIT_S)
        for b in range(30):
            assert leader.request("register_broker", broker_id=10 + b)["error"] == "NONE"
        q.wait_for("the leader's log start past 0", lambda s: s.get(
            leader.node_id, {}).get("log_start_offset", 0) > 0, WAIT_S)
        want = {int(b): r["epoch"] for b, r in leader.request("brokers")["brokers"].items()}
        hw = leader.request("status")["high_watermark"]

        for run in (1, 2):  # the first fetches the snapshot; the second starts from its log
            core = KRaftBroker(KRaftBrokerConfig(100, DEFAULT_CLUSTER_ID))
            events: list[object] = []
            kinds: list[str] = []
            lock = threading.Lock()

            def publish(e: object, events: list[object] = events,
                        lock: threading.Lock = lock) -> None:
                with lock:
                    events.append(e)

            observer = MetadataObserver(settings, DEFAULT_CLUSTER_ID, publish,
                                        lambda leader, epoch: None).start()
            deadline = time.monotonic() + WAIT_S
            while core.metadata_offset < hw - 1:
                with lock:
                    todo, events[:] = list(events), []
                for e in todo:
                    kinds.append(type(e).__name__)
                    core.handle(e)
                assert time.monotonic() < deadline, (core.metadata_offset, hw)
                time.sleep(0.02)
            installed = observer.status.snapshots_installed  # type: ignore[union-attr]
            observer.stop()
            observer = None
            assert {b: r.epoch for b, r in core.image.brokers.items()} == want
            assert kinds[0] == "MetadataSnapshotLoaded", kinds
            assert installed == (1 if run == 1 else 0)  # the second run read it from disk
    finally:
        if observer is not None:
            observer.stop()
        q.stop()
