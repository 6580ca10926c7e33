"""The campaign's cluster: a ``ProxiedKRaftCluster`` (every node dials the controllers through
the proxy mesh; one controller's data directory on a small filesystem) when this checkout has
one and the machine can mount it; otherwise a plain ``KRaftCluster`` and the fault kinds that
need what is missing left out, with the reason (``Built.left_out``)."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.cluster.kraft_launcher import CONTROLLER_ID_BASE, KRaftCluster
from adapters.kraft_chaos.plan import KFaultKind

SMALL_DISK_MIB = 64


@dataclass
class Built:
    cluster: KRaftCluster
    mesh: Any = None
    disks: dict[int, Any] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def build_cluster(directory: Path, controllers: int, brokers: int, *,
                  overrides: dict[str, str], snapshot_every: int, seed: int,
                  disks: bool = True, network: bool = True) -> Built:
    left_out: dict[str, str] = {}
    proxied = _module("adapters.kraft_chaos.proxied_cluster") if network or disks else None
    disk_mod = _module("adapters.kraft_chaos.disk") if disks else None
    small: list[int] = []
    if not disks:
        why = "disk faults turned off"
    elif disk_mod is None or proxied is None:
        why = "this checkout has no small-disk support (adapters.kraft_chaos.disk)"
    else:
        why = disk_mod.mount_problem() or ""
        if not why:
            small = [CONTROLLER_ID_BASE + controllers - 1]
    if not small:
        for k in KFaultKind:
            if k.needs_disk:
                left_out[k.value] = why
    if proxied is None:
        why = ("network faults turned off" if not network else
               "this checkout has no proxy mesh (adapters.kraft_chaos.proxied_cluster)")
        for k in KFaultKind:
            if k.needs_network:
                left_out[k.value] = why
        cluster = KRaftCluster(directory, controllers, brokers, overrides=overrides,
                               snapshot_every_records=snapshot_every, die_with_parent=True)
        return Built(cluster, left_out=left_out)
    kind = proxied.ProxiedKRaftCluster
    kwargs: dict[str, Any] = {"overrides": overrides, "snapshot_every_records": snapshot_every,
                              "die_with_parent": True, "small_disks": small}
    if "seed" in inspect.signature(kind).parameters:
        kwargs["seed"] = seed
    cluster = kind(directory, controllers, brokers, **kwargs)
    mesh = cluster.mesh if network else None
    if not network:
        for k in KFaultKind:
            if k.needs_network:
                left_out[k.value] = "network faults turned off"
    return Built(cluster, mesh, cluster.disks, left_out)  # filled when the cluster is prepared


def dismantle(built_mesh: Any, disks: dict[int, Any]) -> None:
    """Close the mesh and unmount the disks (each at most once; errors are not fatal)."""
    if built_mesh is not None:
        with contextlib.suppress(Exception):
            built_mesh.close()
    for disk in disks.values():
        with contextlib.suppress(Exception):
            disk.restore()
        with contextlib.suppress(Exception):
            disk.unmount()
