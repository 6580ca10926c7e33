"""multiRead (opcode 22) against the real 3-server ensemble: same answers as per-path ``get``."""

from __future__ import annotations

import threading

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, NoNodeError
from kazoo.protocol.serialization import Exists

from adapters.zookeeper import multi_read
from adapters.zookeeper.codec import ClusterIdZnode, LogDirEventZnode, decode, encode
from adapters.zookeeper.multi_read import (
    JUTE_MAXBUFFER,
    MultiRead,
    children_many,
    cut_batches,
    read_many,
    request_bytes,
)
from fsm import zk_paths
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)

pytestmark = pytest.mark.integration


def make_tree(client: KazooClient, count: int, data: bytes = b"") -> list[str]:
    client.ensure_path("/n")
    paths = [f"/n/{i:05d}" for i in range(count)]
    step = max(1, min(500, 500_000 // max(len(data), 1)))  # each multi well under 1 MiB
    for start in range(0, count, step):
        tx = client.transaction()
        for i, path in enumerate(paths[start : start + step], start):
            tx.create(path, data or f"value-{i}".encode())
        assert all(isinstance(r, str) for r in tx.commit())
    return paths


def per_path_get(client: KazooClient, paths: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for path in paths:
        try:
            out[path] = client.get(path)
        except NoNodeError as exc:
            out[path] = exc
    return out


def same(a: dict[str, object], b: dict[str, object]) -> bool:
    def norm(v: object) -> object:
        return type(v).__name__ if isinstance(v, Exception) else v

    return {k: norm(v) for k, v in a.items()} == {k: norm(v) for k, v in b.items()}


def test_many_znodes_with_some_missing_equal_per_path_get(zk_client: KazooClient) -> None:
    paths = make_tree(zk_client, 2500)
    zk_client.ensure_path("/empty")
    wanted = paths + [f"/missing/{i}" for i in range(50)] + ["/n/99999", "/empty", "/"]
    got = read_many(zk_client, wanted, max_batch_paths=300)
    assert list(got) == wanted
    assert same(got, per_path_get(zk_client, wanted))
    assert isinstance(got["/n/99999"], NoNodeError)
    assert got["/empty"][0] == b""  # type: ignore[index]
    assert multi_read.supports_multi_read(zk_client) is True


def test_fallback_to_pipelined_get_async_gives_the_same_answer(zk_client: KazooClient) -> None:
    paths = make_tree(zk_client, 700) + ["/missing", "/n/nope"]
    multi = read_many(zk_client, paths, mode="multi_read")
    pipelined = read_many(zk_client, paths, mode="get_async")
    assert same(multi, pipelined)
    assert multi == {p: v for p, v in pipelined.items() if not isinstance(v, Exception)} | {
        p: v for p, v in multi.items() if isinstance(v, Exception)
    }


def test_unsupported_opcode_is_detected_once_and_remembered(
    zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pre-3.6 server treats opcode 22 as unknown: it answers UNIMPLEMENTED (-6) and closes the
    connection. ZooKeeper 3.8 does the same with opcode 99, so the detection runs against the
    real server's own reaction."""
    paths = make_tree(zk_client, 50) + ["/missing"]
    monkeypatch.setattr(MultiRead, "type", 99)
    sent = []
    real_call = zk_client._call
    monkeypatch.setattr(
        zk_client, "_call", lambda req, res: (sent.append(type(req)), real_call(req, res))[1]
    )
    first = read_many(zk_client, paths)
    assert multi_read.supports_multi_read(zk_client) is False
    probes = sent.count(MultiRead)
    assert 1 <= probes <= 2
    second = read_many(zk_client, paths)
    assert sent.count(MultiRead) == probes  # remembered: no second probe
    monkeypatch.undo()
    assert same(first, read_many(zk_client, paths, mode="multi_read"))
    assert same(first, second)
    multi_read.forget_multi_read_support(zk_client)
    assert multi_read.supports_multi_read(zk_client) is None


def test_large_znodes_are_cut_into_batches_under_the_buffer(zk_client: KazooClient) -> None:
    big = bytes(range(256)) * 400  # 100 KiB each, 4 MiB in all
    paths = make_tree(zk_client, 40, big)
    calls: list[int] = []
    real_call = zk_client._call

    def spy(req: object, res: object) -> object:
        if isinstance(req, MultiRead):
            calls.append(len(req.paths))
        return real_call(req, res)

    zk_client._call = spy  # type: ignore[method-assign]
    try:
        got = read_many(zk_client, paths, expected_znode_bytes=len(big))
    finally:
        del zk_client._call
    assert len(calls) >= 4 and max(calls) * (len(big) + 81) < JUTE_MAXBUFFER
    assert all(got[p][0] == big for p in paths)  # type: ignore[index]


def test_request_size_is_cut_under_jute_maxbuffer(zk_client: KazooClient) -> None:
    """20,000 long paths make a 2.5 MB request: one batch would be refused by the server."""
    long = "/" + "x" * 110
    paths = [f"{long}/{i:06d}" for i in range(20_000)]
    full = [zk_client.chroot + p for p in paths]
    assert request_bytes(full) > 2 * JUTE_MAXBUFFER
    batches = cut_batches(full, max_batch_paths=100_000)
    assert len(batches) >= 3
    assert all(request_bytes(full[a:b]) <= multi_read.DEFAULT_MAX_BATCH_BYTES for a, b in batches)
    got = read_many(zk_client, paths, max_batch_paths=100_000)
    assert all(isinstance(v, NoNodeError) for v in got.values()) and len(got) == 20_000


def test_one_oversized_request_is_what_the_cutting_prevents(zk_ensemble: object) -> None:
    """Proof of the bound: a single 1.2 MB multiRead request makes the server drop the
    connection. Uses its own client: the lost connection must not disturb the fixture's."""
    client = KazooClient(hosts=zk_ensemble.connect_string, timeout=10.0)  # type: ignore[attr-defined]
    client.start(timeout=15)
    try:
        paths = [f"/nope/{'y' * 100}/{i}" for i in range(10_000)]
        assert request_bytes(paths) > JUTE_MAXBUFFER
        with pytest.raises(ConnectionLoss):
            read_many(
                client,
                paths,
                max_batch_bytes=10 * JUTE_MAXBUFFER,
                max_batch_paths=10**6,
                mode="multi_read",
                timeout=30,
            )
    finally:
        client.stop()
        client.close()


def test_children_many(zk_client: KazooClient) -> None:
    make_tree(zk_client, 30)
    zk_client.ensure_path("/leaf")
    got = children_many(zk_client, ["/n", "/leaf", "/missing"])
    assert sorted(got["/n"]) == sorted(zk_client.get_children("/n"))  # type: ignore[arg-type]
    assert got["/leaf"] == [] and isinstance(got["/missing"], NoNodeError)
    pipelined = children_many(zk_client, ["/n", "/leaf", "/missing"], mode="get_async")
    assert sorted(pipelined["/n"]) == sorted(got["/n"])  # type: ignore[arg-type]
    assert pipelined["/leaf"] == [] and isinstance(pipelined["/missing"], NoNodeError)


def test_empty_input(zk_client: KazooClient) -> None:
    assert read_many(zk_client, []) == {}


def test_kafka_znodes_written_then_bulk_read_decode_to_the_same_values(
    zk_client: KazooClient,
) -> None:
    """Every znode kind through the real ensemble: encode, create, multiRead, decode."""
    samples = [
        (zk_paths.CONTROLLER, ControllerZnode(1, 1535000000000)),
        (zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(5)),
        (zk_paths.broker(1), BrokerRegistration(1, (Endpoint("PLAINTEXT", "h", 9092),), "r", 1)),
        (zk_paths.topic("t"), TopicAssignment(((0, (1, 2, 3)), (1, (2, 3, 1))), ((0, (3,)),))),
        (zk_paths.partition_state("t", 0), LeaderAndIsr(1, 3, (1, 2), 5)),
        (zk_paths.delete_topic("t"), EmptyZnode()),
        (zk_paths.REASSIGN_PARTITIONS, ReassignmentZnode(((("t", 0), (1, 2)),))),
        (zk_paths.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode((("t", 1),))),
        (zk_paths.isr_change("isr_change_0000000000"), IsrChangeZnode((("t", 0),))),
        ("/log_dir_event_notification/log_dir_event_0000000000", LogDirEventZnode(2)),
        (zk_paths.CLUSTER_ID, ClusterIdZnode("5Z3OyJcKRmW2ZbqZl0Wq9A")),
    ]
    for path, value in samples:
        zk_client.create(path, encode(path, value), makepath=True)
    got = read_many(zk_client, [p for p, _ in samples])
    assert {p: decode(p, got[p][0]) for p, _ in samples} == dict(samples)  # type: ignore[index]


def test_call_many_queues_requests_as_kazoo_does(zk_client: KazooClient, zk_chroot: str) -> None:
    """``call_many``: many requests queued with one wake-up; answers in order, watches set."""
    paths = make_tree(zk_client, 300)
    expected = {paths[7], "/n/absent"}
    fired: list[str] = []
    both_fired = threading.Event()

    def watcher(event: object) -> None:
        fired.append(event.path)  # type: ignore[attr-defined]
        if set(fired) >= expected:
            both_fired.set()

    requests = [Exists(zk_client.chroot + p, watcher) for p in [*paths, "/n/absent"]]
    results = multi_read.call_many(zk_client, requests)
    stats = [r.get(timeout=10) for r in results]
    assert [s.czxid for s in stats[:-1]] == [zk_client.exists(p).czxid for p in paths]
    assert stats[-1] is None
    zk_client.set(paths[7], b"changed")
    zk_client.create("/n/absent", b"")  # an exists watch on a missing znode fires on creation
    assert both_fired.wait(10), fired

    closed = KazooClient(hosts=zk_chroot)
    closed.start(timeout=15)
    closed.stop()
    (r,) = multi_read.call_many(closed, [Exists(zk_client.chroot + paths[0], None)])
    with pytest.raises(ConnectionClosedError):
        r.get(timeout=10)
    closed.close()


@pytest.mark.parametrize("mode", ["multi_read", "get_async"])
def test_read_nodes_is_read_many_as_data_version_czxid(zk_client: KazooClient, mode: str) -> None:
    paths = make_tree(zk_client, 1200)
    zk_client.set(paths[7], b"changed")  # version 1
    zk_client.ensure_path("/empty")
    wanted = paths + ["/missing", "/empty"]
    full = read_many(zk_client, wanted, mode=mode)
    got: list[object] = []
    for start, end, replies in multi_read.read_nodes(zk_client, wanted, max_batch_paths=500,
                                                     mode=mode):
        assert start == len(got) and end - start == len(replies)
        got.extend(replies)
    assert len(got) == len(wanted)
    for path, node in zip(wanted, got, strict=True):
        want = full[path]
        if isinstance(want, tuple):
            assert type(node) is multi_read.Node
            assert node == (want[0], want[1].version, want[1].czxid)
        else:
            assert type(node) is type(want)
    assert got[7].version == 1 and got[7].data == b"changed"  # type: ignore[union-attr]
