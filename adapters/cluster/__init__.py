"""A whole local cluster: the embedded ZooKeeper ensemble and N broker processes
(``kcontrol cluster up|down|status``), and the narrated demo behind ``make run``.

Modules: ``launcher`` (``Cluster``: start, watch and stop exactly what was started, with a
state file), ``demo`` (the ``make run`` walk-through).
"""

from adapters.cluster.launcher import (
    BrokerRow,
    Cluster,
    ClusterError,
    ClusterStatus,
    NoClusterError,
)

__all__ = ["BrokerRow", "Cluster", "ClusterError", "ClusterStatus", "NoClusterError"]
