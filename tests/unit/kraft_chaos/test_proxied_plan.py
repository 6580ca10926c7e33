"""``ProxiedKRaftCluster``'s plan, no process started: each node's voters string differs from
the plain cluster's in ports only -- other controllers by their mesh link's port, a
controller's own entry its real listener -- and every node's properties still load."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.cluster.kraft_launcher import NODE, KRaftClusterError
from adapters.kraft_chaos.proxied_cluster import ProxiedKRaftCluster
from adapters.kraft_node.properties import settings_from_properties
from adapters.raft_node.args import parse_voters


def test_voters_differ_only_in_ports_and_name_the_links(tmp_path: Path) -> None:
    c = ProxiedKRaftCluster(tmp_path / "k", 3, 2, backend=NODE)
    try:
        plain = parse_voters(c.quorum_voters)
        for n in c.nodes():
            voters = parse_voters(n.props["controller.quorum.voters"])
            assert list(voters) == list(plain)
            for cid, (host, port) in voters.items():
                assert host == plain[cid][0]
                if cid == n.node_id:
                    assert port == plain[cid][1] == n.port
                else:
                    assert port == c.mesh.port(n.name, c.controllers[cid].name)
                    assert port != plain[cid][1]
            settings_from_properties(n.props)  # the listener-is-own-entry rule holds
        links = c.mesh.modes()
        assert len(links) == 3 * 2 + 2 * 3  # each controller to the 2 others, brokers to 3
        assert all(t.startswith("controller-") for _, t in links)
        assert len({c.mesh.port(*k) for k in links}) == len(links)
        assert c.links_of(3000) == sorted(k for k in links if "controller-3000" in k)
    finally:
        c.mesh.close()


def test_a_small_disk_for_no_such_node_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KRaftClusterError, match=r"small disks for \[3007\]"):
        ProxiedKRaftCluster(tmp_path / "k", 3, 0, backend=NODE, small_disks=[3007])


def test_the_mesh_takes_every_frame_the_quorum_transport_takes(tmp_path: Path) -> None:
    from adapters.raft_transport.transport import DEFAULT_MAX_FRAME_SIZE

    c = ProxiedKRaftCluster(tmp_path / "k", 3, 0, backend=NODE)
    try:
        assert c.mesh.max_frame_bytes == DEFAULT_MAX_FRAME_SIZE
    finally:
        c.mesh.close()
