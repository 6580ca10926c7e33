"""The KRaft broker role (issue 25): a process that observes the metadata quorum, runs the
KRaft broker core (``fsm.kraft.broker``) on one event thread, registers and heartbeats with
the active controller over the wire, and serves clients.

``start_broker(settings, cluster_id, controller_node=None)`` (``broker``) returns the running
broker: ``.stop()`` (SIGTERM: a controlled shutdown) and ``.status()``.

Modules: ``broker`` (the parts assembled), ``observer`` and ``metadata_feed`` (the broker's
replica of the metadata log, an observer of the quorum), ``broker_shell`` (the core's event
thread and its effects), ``replica_dirs`` (local replicas under ``log.dirs``),
``controller_channel`` (the connection to the active controller), ``core_requests`` (the
core's requests on it), ``client_listener`` and ``client_apis`` (what clients are
answered), ``forwarding`` (admin requests sent on to the controller), ``args`` and
``__main__`` (a broker process from a command line, for tests).
"""

from adapters.kraft_broker.broker import KRaftBrokerNode, start_broker

__all__ = ["KRaftBrokerNode", "start_broker"]
