"""``kcontrol audit`` over a live KRaft cluster: the KRaft invariant catalogue
(``invariants.kraft``) checked on a ``KRaftView`` read from the running processes.

* ``images`` -- a metadata image as it travels between a node and the auditor: its
  snapshot records (``fsm.kraft.image.snapshot``), encoded, in pages, with a digest;
* ``node_ops`` -- the admin-socket operations a node answers for the audit (``image``,
  ``records_at``), read on the node's event thread;
* ``collect`` -- the auditor: reads every node, waits until the controllers settle at one
  committed offset, builds the ``KRaftView``;
* ``audit`` -- runs the catalogue on it and reports.
"""
