"""The ZooKeeper side: a real ensemble on demand, and (later) Kafka's znode layout through kazoo."""
