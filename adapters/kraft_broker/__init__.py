"""The KRaft broker role (issue 25): a process that observes the metadata quorum, runs the
KRaft broker core (``fsm.kraft.broker``) on one event thread, registers and heartbeats with
the active controller over the wire, and serves clients.

Modules: ``observer`` and ``metadata_feed`` (the broker's replica of the metadata log, an
observer of the quorum), ``broker_shell`` (the core's event thread and its effects),
``replica_dirs`` (local replicas under ``log.dirs``).
"""
