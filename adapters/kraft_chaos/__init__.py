"""The KRaft fault campaign (``kcontrol chaos --mode kraft``, issue 26): a live quorum of
controller processes and brokers under kill -9, SIGSTOP, disk faults and network faults, with
admin work running and the live audit after every fault.

Modules:

- ``proxy``: ``ProxyMesh``, a frame-aware TCP proxy per directed link between nodes (cut a
  node off, drop one direction's messages);
- ``proxied_cluster``: ``ProxiedKRaftCluster``, a cluster whose nodes dial the controllers
  through the mesh, chosen nodes' data on a ``SmallDisk``;
- ``disk``: a small filesystem (tmpfs) under a controller's metadata directory, made full
  or read-only on demand;
- the campaign itself: ``plan`` (the fault kinds, the seeded plan), ``cluster`` (the proxied
  cluster with its small disk, or what is left out and why), ``observe`` (readings, recovery,
  settling), ``faults`` (each kind injected, measured, undone), ``workload`` (admin work over
  the wire, its outcomes, the lost-topics check), ``committed`` (the ledger of committed
  records), ``report`` (the figures and the ``--json`` report), ``runner`` (the campaign's
  steps).

What it shares with the ZooKeeper campaign -- the admin actions' plan, the figures, the step
loop, the time bounds, signals and clean-up -- is in ``adapters.chaos.plan``,
``adapters.chaos.report`` and ``adapters.campaign``.
"""
