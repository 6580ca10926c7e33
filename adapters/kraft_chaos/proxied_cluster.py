"""``ProxiedKRaftCluster``: a local KRaft cluster (``KRaftCluster``) whose nodes reach the
controllers through a ``ProxyMesh`` -- so the fault campaign can cut a node off or drop one
direction's messages -- and whose chosen nodes keep their data on a ``SmallDisk``.

Wiring: for every node N and every controller C other than N, the mesh has a link
``(N.name, C.name)`` whose upstream is C's real controller listener, and N's
``controller.quorum.voters`` names C by that link's port. A controller's own entry stays its
real listener (``kcontrol node`` requires a controller to listen at its own voters entry), so
each node's voters string differs from the plain cluster's in ports only. Brokers' client
listeners are not proxied; the admin sockets neither (the test harness watches through them).

Disks: ``small_disks`` names the nodes (controller ids, normally) whose data directory (their
``log.dirs`` and metadata log) is a tmpfs of ``disk_mib`` MiB, mounted once the cluster
directory is prepared and before the storage is formatted; ``stop()`` (also from ``__exit__``
and at interpreter exit) stops the nodes, then closes the mesh and unmounts the disks -- the
cluster is done after it. ``DiskUnavailable`` if a disk is asked where mounting is impossible
(callers check ``disk.mount_problem()`` first).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from adapters.cluster.kraft_launcher import (
    NODE,
    KRaftCluster,
    KRaftClusterError,
)
from adapters.cluster.kraft_nodes import HOST, KRaftNode
from adapters.kraft_chaos.disk import SmallDisk
from adapters.kraft_chaos.proxy import ProxyMesh
from adapters.raft_transport.transport import DEFAULT_MAX_FRAME_SIZE

DISK_MIB = 64


class ProxiedKRaftCluster(KRaftCluster):
    """``KRaftCluster``'s arguments, and: ``small_disks`` (node ids on a tmpfs of ``disk_mib``
    MiB), ``seed`` (the mesh's drop decisions), ``max_frame_bytes`` (the mesh's frame bound:
    by default the quorum transport's own, so the proxy never refuses a frame the nodes
    would take -- a Fetch answer carries up to 8 MiB of records plus its headers, over
    ``ProxyMesh``'s 8 MiB default)."""

    def __init__(self, directory: str | os.PathLike[str], controllers: int = 3,
                 brokers: int = 3, *, small_disks: Iterable[int] = (), disk_mib: int = DISK_MIB,
                 seed: int = 0, max_frame_bytes: int = DEFAULT_MAX_FRAME_SIZE,
                 **kwargs: Any) -> None:
        # properties(), called by the base constructor, adds the mesh's links
        self.mesh = ProxyMesh(HOST, seed=seed, max_frame_bytes=max_frame_bytes)
        self.disks: dict[int, SmallDisk] = {}
        try:
            super().__init__(directory, controllers, brokers, **kwargs)
        except BaseException:
            self.mesh.close()
            raise
        self.small_disks = tuple(dict.fromkeys(small_disks))
        self.disk_mib = disk_mib
        unknown = [i for i in self.small_disks
                   if i not in self.controllers and i not in self.brokers]
        if unknown:
            self.mesh.close()
            raise KRaftClusterError(f"small disks for {unknown}: no such node (controllers "
                                    f"{sorted(self.controllers)}, brokers {sorted(self.brokers)})")

    # ------------------------------------------------------------------ wiring

    def voters_for(self, n: KRaftNode) -> str:
        """``controller.quorum.voters`` as node ``n`` writes it: every other controller by
        its link's port on the mesh, ``n`` itself (a controller) by its real listener."""
        entries = []
        for c in self.controllers.values():
            if c.node_id == n.node_id:
                entries.append(f"{c.node_id}@{c.address}")
                continue
            link = (n.name, c.name)
            if link not in self.mesh.modes():
                self.mesh.add_link(n.name, c.name, (HOST, c.port))
            entries.append(f"{c.node_id}@{HOST}:{self.mesh.port(*link)}")
        return ",".join(entries)

    def properties(self, n: KRaftNode) -> dict[str, str]:
        return {**super().properties(n), "controller.quorum.voters": self.voters_for(n)}

    def argv(self, n: KRaftNode) -> list[str]:
        args = super().argv(n)
        if self.backend != NODE:  # python -m adapters.raft_node --voters ...
            args[args.index("--voters") + 1] = self.voters_for(n)
        return args

    def links_of(self, node_id: int) -> list[tuple[str, str]]:
        """The mesh links from or to node ``node_id``."""
        name = self.node(node_id).name
        return sorted(k for k in self.mesh.modes() if name in k)

    # ------------------------------------------------------------------ lifecycle

    def prepare(self) -> None:
        super().prepare()
        for node_id in self.small_disks:
            if node_id not in self.disks:
                self.disks[node_id] = SmallDisk(self.node(node_id).data_dir, self.disk_mib)

    def start_node(self, node_id: int) -> KRaftNode:
        self.mesh.start()
        return super().start_node(node_id)

    restart = start_node

    def stop(self, grace: float = 15.0) -> list[str]:
        """Stop the nodes (as ``KRaftCluster.stop``), then close the mesh and unmount the
        small disks (their files are gone)."""
        try:
            return super().stop(grace)
        finally:
            self.mesh.close()
            for disk in self.disks.values():
                disk.unmount()

    def __enter__(self) -> ProxiedKRaftCluster:
        return self
