"""``kcontrol node``: one KRaft process -- a controller (a voter of the metadata quorum hosting
the quorum controller), a broker (an observer of the quorum that registers, heartbeats and
serves clients), or both in one process (``process.roles``).

* ``settings`` -- ``NodeSettings``: what a node is configured with (the contract between the
  configuration parser, the storage tool and the runtime);
* ``properties`` -- a Kafka-style properties file (and ``--override key=value`` flags) parsed
  into ``NodeSettings``, contradictions refused with the key named;
* ``meta_properties`` -- ``meta.properties`` version 1 in every log directory: written by
  ``kcontrol storage format``, checked at start;
* ``runtime`` -- the running node: its controller and broker parts started and stopped.
"""
