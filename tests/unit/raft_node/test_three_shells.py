"""Three node shells around the real Raft core, in one process: in-memory logs, a network that
hands each ``send`` to the destination shell's queue (and drops what goes to a stopped node).
One leader is elected, appends commit on every log alike, and stopping the leader brings a
new leader in a higher epoch that commits. (The processes, fsync'd logs and TCP are the
integration tests': ``tests/integration/test_raft_quorum.py``.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from adapters.raft_node.shell import RaftNodeShell
from fsm.raft.config import RaftConfig
from tests.unit.raft_node.fakes import MemoryLog

IDS = (1, 2, 3)
WAIT = 10.0


class Network:
    def __init__(self) -> None:
        self.shells: dict[int, RaftNodeShell] = {}
        self.down: set[int] = set()

    def transport(self, source: int) -> Any:
        net = self

        class _T:
            def send(self, destination: int, message: Any) -> None:
                if source in net.down or destination in net.down:
                    return
                shell = net.shells.get(destination)
                if shell is not None:
                    shell.deliver(source, message)

        return _T()


def start_node(net: Network, node_id: int, log: MemoryLog) -> RaftNodeShell:
    config = RaftConfig(node_id=node_id, voters=IDS, election_timeout_ms=150,
                        fetch_timeout_ms=300, election_backoff_max_ms=150,
                        request_timeout_ms=300)
    shell = RaftNodeShell(config, log, net.transport(node_id))
    net.shells[node_id] = shell
    net.down.discard(node_id)
    shell.start()
    return shell


@pytest.fixture
def cluster() -> Iterator[tuple[Network, dict[int, MemoryLog]]]:
    net = Network()
    logs = {i: MemoryLog([]) for i in IDS}
    for i in IDS:
        start_node(net, i, logs[i])
    yield net, logs
    for s in net.shells.values():
        s.stop()


def leader_of(net: Network, *, min_epoch: int = 0) -> RaftNodeShell:
    live = [s for i, s in net.shells.items() if i not in net.down]
    for s in live:
        try:
            s.wait_for(lambda st: st.epoch >= min_epoch and st.leader_id in IDS
                       and st.leader_id not in net.down, WAIT)
        except TimeoutError:
            pytest.fail(f"no leader: {[x.status for x in live]}")
    leaders = {s.status.leader_id for s in live}
    assert len(leaders) == 1, [x.status for x in live]
    shell = net.shells[leaders.pop()]
    shell.wait_for(lambda st: st.is_leader, WAIT)
    return shell


def records_of(log: MemoryLog, to: int) -> list[tuple[int, int, tuple[Any, ...]]]:
    return [(b.base_offset, b.epoch, b.records) for b in log.batches if b.end_offset <= to]


def test_one_leader_and_appends_commit_on_every_log(
        cluster: tuple[Network, dict[int, MemoryLog]]) -> None:
    net, logs = cluster
    leader = leader_of(net)
    tickets = [leader.append((f"r{i}".encode(),)) for i in range(20)]
    assert all(t.wait(WAIT) and t.error is None for t in tickets), [t.error for t in tickets]
    end = tickets[-1].end_offset
    for s in net.shells.values():
        s.wait_for(lambda st: st.high_watermark >= end, WAIT)
    assert records_of(logs[1], end) == records_of(logs[2], end) == records_of(logs[3], end)
    assert [r for _, _, rs in records_of(logs[1], end) for r in rs if isinstance(r, bytes)] \
        == [f"r{i}".encode() for i in range(20)]


def test_a_new_leader_in_a_higher_epoch_after_the_leader_stops(
        cluster: tuple[Network, dict[int, MemoryLog]]) -> None:
    net, logs = cluster
    old = leader_of(net)
    t = old.append((b"before",))
    assert t.wait(WAIT) and t.error is None
    old_id, old_epoch = old.config.node_id, old.status.epoch
    net.down.add(old_id)
    old.stop()
    new = leader_of(net, min_epoch=old_epoch + 1)
    assert new.config.node_id != old_id
    t2 = new.append((b"after",))
    assert t2.wait(WAIT) and t2.error is None, t2.error
    assert t2.epoch > old_epoch
    # the old leader comes back on its log and follows
    start_node(net, old_id, logs[old_id])
    back = net.shells[old_id]
    back.wait_for(lambda st: st.high_watermark >= t2.end_offset, WAIT)
    assert not back.status.is_leader
    assert records_of(logs[old_id], t2.end_offset) == records_of(
        logs[new.config.node_id], t2.end_offset)
