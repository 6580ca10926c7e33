"""The live KRaft audit on three real controller processes: their committed images are read
over the admin sockets and agree; a broker's registration record is fetched
by the offset its epoch names; a controller that halts is reported, not a crash; and a
forged disagreement (a controller answering another image) is found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.kraft_audit import images
from adapters.kraft_audit.audit import audit
from adapters.kraft_audit.collect import Ask, collect
from adapters.raft_node.launcher import LocalQuorum, Voter

pytestmark = pytest.mark.integration

ELECTION_MS = 500
WAIT_S = 30.0


def ask_of(v: Voter) -> Ask:
    def ask(op: str, args: dict[str, Any]) -> dict[str, Any]:
        return v.request(op, **args)

    return ask


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Any:
    q = LocalQuorum(tmp_path_factory.mktemp("audit"), controller=True,
                    election_timeout_ms=ELECTION_MS, fetch_timeout_ms=4 * ELECTION_MS,
                    election_backoff_max_ms=ELECTION_MS)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the active controller", lambda _: _active(leader), WAIT_S)
        for b in (1, 2, 3):
            reg = leader.request("register_broker", broker_id=b)
            assert reg["error"] == "NONE", reg
        yield q, leader
    finally:
        q.stop()


def _active(v: Voter) -> bool:
    try:
        return bool(v.request("brokers")["active"])
    except Exception:  # noqa: BLE001 -- still starting: polled again
        return False


def test_controllers_agree_and_the_catalogue_holds(quorum: Any) -> None:
    q, leader = quorum
    asks = {v.node_id: ask_of(v) for v in q.voters.values()}
    report = audit(asks, {}, settle_s=WAIT_S, catch_up_s=5.0)
    assert report.quiet and not report.violations, report.to_json()
    last = report.last
    assert {n for n, c in last.controllers.items() if c.answer["active"]} == {leader.node_id}
    shas = {c.committed_sha for c in last.controllers.values()}
    assert len(shas) == 1  # one committed image, byte for byte
    assert sorted(last.view.committed.brokers) == [1, 2, 3]
    assert "controllers_agree_on_committed" in report.checked


def test_a_forged_image_is_a_violation(quorum: Any) -> None:
    q, leader = quorum
    standby = next(v for v in q.voters.values() if v is not leader)
    real = ask_of(standby)

    def forged(op: str, args: dict[str, Any]) -> dict[str, Any]:
        answer = real(op, args)
        if op == "image" and "start" not in args:
            # the standby claims an image without broker 3's registration
            first = answer["committed"]
            keep = [h for h in first["records"] if not _is_broker(h, 3)]
            raw = [bytes.fromhex(h) for h in keep]
            answer["committed"] = {"count": len(raw), "sha256": images.digest(raw),
                                   "start": 0, "records": keep}
        return answer

    asks = {v.node_id: ask_of(v) for v in q.voters.values()}
    asks[standby.node_id] = forged
    report = audit(asks, {}, settle_s=WAIT_S, catch_up_s=1.0)
    names = {v.invariant for v in report.violations}
    assert "controllers_agree_on_committed" in names, report.to_json()


def _is_broker(hex_record: str, broker_id: int) -> bool:
    from fsm.kraft.records.codec import decode_record
    from fsm.kraft.records.values import RegisterBrokerRecord

    r = decode_record(bytes.fromhex(hex_record))
    return isinstance(r, RegisterBrokerRecord) and r.broker_id == broker_id


def test_records_at_returns_the_registrations(quorum: Any) -> None:
    q, leader = quorum
    reg = leader.request("brokers")["brokers"]
    offsets = [reg[str(b)]["epoch"] for b in (1, 2, 3)]
    got = leader.request("records_at", offsets=offsets + [10**9])["records"]
    from fsm.kraft.records.codec import decode_record

    for b, o in zip((1, 2, 3), offsets, strict=True):
        r = decode_record(bytes.fromhex(got[str(o)]))
        assert r.broker_id == b
    assert got[str(10**9)] is None
    with pytest.raises(Exception, match="offsets"):
        leader.request("records_at", offsets="all")


def test_a_halted_node_is_reported(tmp_path: Path) -> None:
    # a node that does not answer is named in `unreachable`, the others are still read
    q = LocalQuorum(tmp_path, controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the active controller", lambda _: _active(leader), WAIT_S)
        down = next(v for v in q.voters.values() if v is not leader)
        asks = {v.node_id: ask_of(v) for v in q.voters.values()}
        down.kill()
        reading = collect(asks, {}, settle_s=WAIT_S)
        assert down.node_id in reading.unreachable
        assert set(reading.controllers) == set(asks) - {down.node_id}
    finally:
        q.stop()


def test_the_command_audits_by_admin_sockets(quorum: Any, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    q, _ = quorum
    spec = ",".join(f"controller:{v.node_id}=127.0.0.1:{v.admin_port}"
                    for v in q.voters.values())
    out = tmp_path / "audit.json"
    run = subprocess.run([sys.executable, "-m", "adapters.cli", "audit", "--kraft-admin", spec,
                          "--json", str(out)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "invariants hold" in run.stdout + run.stderr
    report = json.loads(out.read_text())
    assert report["ok"] and report["quiet"] and len(report["controllers"]) == 3
    assert len({c["committed_sha256"] for c in report["controllers"].values()}) == 1
    # a plan file that names no node is refused with exit 2
    bad = tmp_path / "kraft-cluster.json"
    bad.write_text("{}")
    run = subprocess.run([sys.executable, "-m", "adapters.cli", "audit", "--kraft",
                          str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "not a KRaft cluster plan" in run.stdout + run.stderr
