"""Named safety predicates over a global snapshot (controllers, brokers, ZooKeeper data)."""
