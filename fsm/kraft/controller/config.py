"""The quorum controller's settings (seed 004's configuration table, with Kafka's defaults)."""

from __future__ import annotations

from dataclasses import dataclass

MAX_RECORDS_PER_BATCH = 10_000
"""One request never appends more records than this (ZooKeeper's 1 MB limit's counterpart:
one atomic batch of the metadata log stays bounded)."""


@dataclass(frozen=True, slots=True)
class QuorumControllerConfig:
    node_id: int
    cluster_id: str
    session_timeout_ms: int = 18_000  # broker.session.timeout.ms
    default_num_partitions: int = 1  # num.partitions
    default_replication_factor: int = 3  # default.replication.factor
    max_records_per_batch: int = MAX_RECORDS_PER_BATCH
