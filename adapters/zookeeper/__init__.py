"""The kazoo binding: the cores against a real ZooKeeper ensemble, in Kafka's znode layout.

- ``codec``: Kafka's znode data, byte for byte (``fsm`` values <-> Kafka's JSON), no kazoo;
- ``connect``: the one place a ZooKeeper client is made (digest authentication, ACLs, chroot);
- ``reads``: controller events from ZooKeeper reads, watches re-registered;
- ``writer``: a ``ZkWrite`` as ``multi`` transactions fenced by ``/controller_epoch``'s version;
- ``multi_read``: bulk reads (ZooKeeper 3.6+'s ``multiRead``, windows of batches);
- ``broker_registration``: a broker's own duties (its registration, ISR changes, notifications);
- ``audit``: the live audit, the invariants over ZooKeeper's state read in bulk.

The ensemble itself is started and stopped by ``adapters.ensemble``.
"""
