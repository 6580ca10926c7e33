"""KRaft mode's pure core (seed 004, KIP-631): metadata records, the metadata image, the
quorum controller and the KRaft broker. No I/O, no clocks, no randomness: time, topic ids and
incarnation ids arrive in events, as in the ZooKeeper-mode core."""
