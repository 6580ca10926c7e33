"""A real ZooKeeper ensemble on demand (``kcontrol zookeeper up|status|down|run``, the test
and benchmark ensembles, the embedded ensemble of ``kcontrol cluster``): Debian's ZooKeeper
jars run as N ``QuorumPeerMain`` processes on loopback ports, in one directory.

Modules: ``launcher`` (``Ensemble``: plan, start, status, stop), ``processes`` (Java,
ZooKeeper's class path, free ports, the processes started and how to recognise them),
``four_letter`` (``srvr``, ``mntr``, ``ruok``), ``status`` (what ``status`` and ``stop``
report), ``errors`` (each message says what to do). No kazoo: the ensemble is only started,
watched and stopped here; ``adapters.zookeeper`` talks to it.
"""

from adapters.ensemble.errors import (
    AlreadyRunningError,
    EnsembleError,
    JarsNotFoundError,
    JavaNotFoundError,
    NoEnsembleError,
    PortInUseError,
    QuorumError,
)
from adapters.ensemble.launcher import Ensemble
from adapters.ensemble.processes import (
    STATE_FILE,
    find_java,
    free_ports,
    is_server_process,
    port_is_free,
    process_alive,
    wait_for,
    zookeeper_classpath,
)
from adapters.ensemble.status import EnsembleStatus, ServerStatus, StopResult

__all__ = [
    "STATE_FILE",
    "AlreadyRunningError",
    "Ensemble",
    "EnsembleError",
    "EnsembleStatus",
    "JarsNotFoundError",
    "JavaNotFoundError",
    "NoEnsembleError",
    "PortInUseError",
    "QuorumError",
    "ServerStatus",
    "StopResult",
    "find_java",
    "free_ports",
    "is_server_process",
    "port_is_free",
    "process_alive",
    "wait_for",
    "zookeeper_classpath",
]
