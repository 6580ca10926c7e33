"""The campaign's audit can fail: a cluster broken by hand is caught (a leader that is
neither registered nor in the ISR, a leader decided under a controller epoch older than the
last audit's -- a zombie controller's write -- and brokers whose metadata no longer matches
ZooKeeper). Also: the session-expiry fault ends exactly the session it names."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from rich.console import Console

from adapters.chaos.observe import DECIDED_WITHIN_INTERVAL, WIRE_METADATA
from adapters.chaos.plan import Action, ActionKind
from adapters.chaos.runner import Campaign, Settings
from adapters.chaos.sessions import derive_password, expire_session
from adapters.ensemble import Ensemble
from fsm import zk_paths

pytestmark = pytest.mark.integration

SESSION_MS = 4000


@pytest.fixture
def campaign(zk_ensemble: Ensemble, tmp_path: Path) -> Iterator[Campaign]:
    """Two brokers on the session ensemble, in a chroot of their own."""
    chroot = f"{zk_ensemble.connect_string}/kcontrol-chaos-{uuid.uuid4().hex}"
    settings = Settings(tmp_path / "cluster", brokers=2, faults=1, seed=1, zookeeper=chroot,
                        session_timeout_ms=SESSION_MS, settle_timeout_s=60.0)
    c = Campaign(settings, Console(file=io.StringIO(), width=200))
    try:
        c.start()
        yield c
    finally:
        c.close()


def _rewrite_state(client: KazooClient, topic: str, partition: int, **fields: int) -> None:
    path = zk_paths.partition_state(topic, partition)
    data, stat = client.get(path)
    state = json.loads(data)
    state.update(fields)
    client.set(path, json.dumps(state).encode(), version=stat.version)


def test_audit_reports_a_cluster_broken_by_hand(campaign: Campaign) -> None:
    assert campaign.workload is not None and campaign.observer is not None
    assert campaign.client is not None
    assert campaign.workload.run(1, Action(ActionKind.CREATE, "broken", ((1, 2), (2, 1)))) \
        == "written"
    st, answers, problems = campaign.settle(time.monotonic() + 60.0)
    assert problems == [] and st is not None
    assert campaign.observer.audit(st, answers) == [], "a healthy cluster audits clean"

    _rewrite_state(campaign.client, "broken", 0, leader=99)
    p1 = st.partition_states[("broken", 1)].leader_and_isr
    _rewrite_state(campaign.client, "broken", 1, leader_epoch=p1.leader_epoch + 1,
                   controller_epoch=(st.controller_epoch or 1) - 1)

    st = campaign.state_now()
    rows = campaign.observer.audit(st, campaign.metadata())
    found = {(r.invariant, r.entity) for r in rows}
    assert ("leader_in_isr", "broken-0") in {(r.invariant, r.entity) for r in rows} or any(
        r.invariant == "leader_in_isr" and "broken-0" in r.detail for r in rows), rows
    assert any(r.invariant == "leader_is_registered_or_none" for r in rows), rows
    assert (DECIDED_WITHIN_INTERVAL, "broken-1") in found, rows
    assert any(r.invariant == WIRE_METADATA and r.entity == "broken-0" for r in rows), rows
    assert campaign.workload.lost(st) == []


def test_lost_topic_is_reported(campaign: Campaign) -> None:
    assert campaign.workload is not None and campaign.client is not None
    campaign.workload.run(1, Action(ActionKind.CREATE, "doomed", ((1, 2),)))
    st, _, problems = campaign.settle(time.monotonic() + 60.0)
    assert problems == [] and st is not None
    # Removed behind the controller's back, not through /admin/delete_topics.
    campaign.client.delete(zk_paths.topic("doomed"), recursive=True)
    lost = campaign.workload.lost(campaign.state_now())
    assert lost and "doomed" in lost[0]


def test_expire_session_ends_the_named_session(zk_chroot: str) -> None:
    owner = KazooClient(hosts=zk_chroot, timeout=5.0)
    watch = KazooClient(hosts=zk_chroot, timeout=5.0)
    owner.start(timeout=15)
    watch.start(timeout=15)
    try:
        session_id, password = owner.client_id
        assert derive_password(session_id) == password
        owner.create("/mine", b"", ephemeral=True)
        expire_session(zk_chroot, session_id, watch=watch, owned_path="/mine")
        assert watch.exists("/mine") is None
        deadline = time.monotonic() + 15
        while owner.client_id is None or owner.client_id[0] == session_id:
            assert time.monotonic() < deadline, "the owner never saw its session expire"
            time.sleep(0.05)
    finally:
        for c in (owner, watch):
            c.stop()
            c.close()
