"""A deterministic simulated world: in-memory ZooKeeper, channels, brokers, a scheduler."""
