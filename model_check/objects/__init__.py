"""The checker for worlds that are Python objects (the KRaft world, the Raft world): one
breadth-first search, one walker and one command over any *world kind* (``kind.WorldKind``:
how to load a scenario, build the start world, view it and check it), where the ZooKeeper-mode
checker (``model_check.search``) works on its encoded world. ``spark`` runs the same search on
PySpark."""
