"""``kcontrol audit --kraft DIR`` on a real KRaft cluster (3 controllers, 2 brokers, started
by ``KRaftCluster``): the controllers' committed images agree and every broker's image is
the committed one, before and after a topic is created through a broker; the brokers'
replayed state is read over their own admin sockets; a broker whose image is forged is
found by the quiescent invariant; a killed broker is named, not a crash."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.cluster.kraft_launcher import KRaftCluster
from adapters.kraft_audit import images
from adapters.kraft_audit.audit import audit
from adapters.kraft_audit.targets import from_plan
from tests.integration.kraft_fixtures import running_kraft

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    # snapshots every 2 records: the brokers' registrations are soon below the log start,
    # read from the snapshot's image (a false violation once, found by the demo's author)
    with running_kraft(Path(tmp_path_factory.mktemp("kraft-audit")) / "k", 2,
                       snapshot_every_records=2) as c:
        yield c


def run_audit(c: KRaftCluster, tmp: Path) -> tuple[int, dict[str, Any], str]:
    out = tmp / "audit.json"
    run = subprocess.run([sys.executable, "-m", "adapters.cli", "audit", "--kraft",
                          str(c.root), "--json", str(out)],
                         capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(out.read_text()), run.stdout + run.stderr


def test_a_fresh_cluster_passes(kraft: KRaftCluster, tmp_path: Path) -> None:
    snapshots = list(kraft.root.glob("controller-*/__cluster_metadata-0/*.checkpoint"))
    assert snapshots, "the controllers wrote no snapshot: the test would prove less"
    code, report, text = run_audit(kraft, tmp_path)
    assert code == 0, text
    assert report["quiet"] and len(report["controllers"]) == 3
    assert set(report["brokers"]) == {str(b) for b in kraft.brokers}
    assert {b["state"] for b in report["brokers"].values()} == {"RUNNING"}
    assert "brokers_converge_on_the_committed_image" in report["checked"]


def test_a_topic_created_through_a_broker_is_audited(kraft: KRaftCluster,
                                                       tmp_path: Path) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kraft.bootstrap_servers,
                             request_timeout_ms=10000)
    try:
        admin.create_topics([NewTopic("audited", 4, 2)])
    finally:
        admin.close()
    code, report, text = run_audit(kraft, tmp_path)
    assert code == 0, text
    assert "1 topic(s), 4 partition(s)" in text.replace("\n", " ")
    offsets = {b["offset"] for b in report["brokers"].values()}
    assert offsets == {report["committed_offset"]}  # every broker replayed it


def test_a_forged_broker_image_is_found(kraft: KRaftCluster) -> None:
    targets = from_plan(kraft.root)
    controllers = {t.node_id: t.ask() for t in targets if "controller" in t.roles}
    brokers = {t.node_id: t.ask() for t in targets if "broker" in t.roles}
    victim = min(brokers)
    real = brokers[victim]

    def forged(op: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = real(op, args)
        if op == "broker_state":
            first = answer["image"]
            keep = first["records"][:-1]  # the broker "lost" its last record
            raw = [bytes.fromhex(h) for h in keep]
            answer["image"] = {"count": len(raw), "sha256": images.digest(raw), "start": 0,
                               "records": keep}
        return answer

    brokers[victim] = forged
    report = audit(controllers, brokers, settle_s=10.0, catch_up_s=2.0)
    details = [v.detail for v in report.violations
               if v.invariant == "brokers_converge_on_the_committed_image"]
    assert details == [f"broker {victim}'s image differs from the committed one"], \
        report.to_json()


def test_a_killed_broker_is_named(kraft: KRaftCluster, tmp_path: Path) -> None:
    victim = max(kraft.brokers)
    kraft.kill(victim)
    code, report, text = run_audit(kraft, tmp_path)
    assert str(victim) in report["unreachable"]
    assert str(victim) not in report["brokers"]
    # the controllers are still read and agree
    assert len({c["committed_sha256"] for c in report["controllers"].values()}) == 1
    assert code in (0, 1), text


