"""A live metadata-quorum voter: the pure Raft core (``fsm.raft``) on an fsync'd log
(``adapters.raft_log``) and a TCP transport (``adapters.raft_transport``), one event thread,
optionally hosting the quorum controller (``fsm.kraft``) on the log.

* ``shell`` -- the event thread, its bounded queue, the flush it defers to batch fsyncs;
* ``port`` -- each effect of the core carried out on the log and the transport;
* ``timers`` -- the core's timers as deadlines the event thread waits on;
* ``status`` -- what the node shows other threads (role, epoch, high watermark);
* ``process`` -- ``python -m adapters.raft_node``: arguments, logging, signals.
"""
