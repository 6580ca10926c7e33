"""A small cluster's metadata, written by the real log code: the records (a feature, two
brokers, a topic of two partitions, a config, a partition change), a log directory holding
them in batches (a LeaderChange first, as a leader writes), and a snapshot of their image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.raft_log import METADATA, PARTITION_DIR, MetadataLog
from fsm.kraft.image import image_from_records, snapshot_records
from fsm.kraft.records.uuid import uuid_from_base64
from fsm.kraft.records.values import (
    BrokerEndpoint,
    ConfigRecord,
    FeatureLevelRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from fsm.raft.messages import Batch, LeaderChange, OffsetAndEpoch

CLOCK_MS = 1_700_000_000_000
TOPIC_ID = uuid_from_base64("GU_rXds2FGppL1JqXYpx2g")
INCARNATION = uuid_from_base64("AAAAAAAAAAAAAAAAAAAAAQ")


def records() -> list[Any]:
    ep = (BrokerEndpoint("PLAINTEXT", "localhost", 9092),)
    return [
        FeatureLevelRecord("metadata.version", 1, 7),
        RegisterBrokerRecord(1, INCARNATION, 10, ep, fenced=True),
        RegisterBrokerRecord(2, INCARNATION, 11, ep, rack="r2", fenced=True),
        UnfenceBrokerRecord(1, 10),
        TopicRecord("bar", TOPIC_ID),
        PartitionRecord(0, TOPIC_ID, (1, 2), (1, 2), leader=1),
        PartitionRecord(1, TOPIC_ID, (2, 1), (2, 1), leader=2),
        ConfigRecord(2, "bar", "cleanup.policy", "compact"),
        PartitionChangeRecord(0, TOPIC_ID, leader=-1),
    ]


def write_log(root: Path, epoch: int = 3) -> Path:
    """The log under ``root`` (``metadata.log.dir``): a LeaderChange, then the records in
    batches of 1, 3 and 5; its partition directory."""
    rs = records()
    with MetadataLog.open(root, serde=METADATA, clock_ms=lambda: CLOCK_MS) as log:
        log.append([Batch(0, epoch, (LeaderChange(1, (1, 2, 3), (1, 2)),), control=True),
                    Batch(1, epoch, tuple(rs[:1])), Batch(2, epoch, tuple(rs[1:4])),
                    Batch(5, epoch, tuple(rs[4:]))])
        log.flush()
    return root / PARTITION_DIR


def write_snapshot(root: Path, epoch: int = 3) -> Path:
    """The log of :func:`write_log` and a snapshot of its image at its end (offset 10); the
    snapshot's path."""
    write_log(root, epoch)
    snap = OffsetAndEpoch(10, epoch)
    with MetadataLog.open(root, serde=METADATA, clock_ms=lambda: CLOCK_MS) as log:
        log.write_snapshot(snap, snapshot_records(image_from_records(records())))
    return root / PARTITION_DIR / "00000000000000000010-0000000003.checkpoint"
