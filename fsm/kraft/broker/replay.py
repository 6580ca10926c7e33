"""Committed metadata records in, replica roles out.

Every record goes through ``MetadataImage.apply``, the controller's own replay, in log order;
``metadata_offset`` follows the last one applied (what heartbeats report as
``current_metadata_offset``). Records at offsets already replayed (a batch fetched again) are
skipped; a batch that would leave a gap is refused (the fetcher fetches again from
``metadata_offset + 1``). The metadata quorum's own control records (``LeaderChange``, on
the Raft log of issue 24) take their offset and are not replayed, as Kafka's metadata
loader skips control batches. A record that does not replay raises ``ImageError`` (the log is
wrong upstream; the image says why).

Replicas start when the broker has caught up, not before: while STARTING the broker only
replays. (Kafka's ``BrokerServer`` waits for the controller's ``isCaughtUp`` and for the first
metadata publish, which comes only once the loader has reached the high watermark; that first
publish starts the log manager, which removes stray logs, and the replica manager.) Entering
RECOVERY,
``recover`` deletes the local replicas (``Start.local_replicas``) that the image no longer
assigns to this broker -- their topic is gone (a RemoveTopicRecord the broker may never
have seen, folded into a snapshot) or the broker is no longer among the replicas, as
Kafka's stray-log check -- and makes the broker leader or follower of every partition
assigned to it. From then on each batch is compared partition by partition, only for the
partitions its records touched (``replicas.reconcile``).

A snapshot fetched from the quorum's leader (``MetadataSnapshotLoaded``: the broker fell
behind the leader's log start) replaces the image whole, as Kafka's metadata loader publishes
a snapshot's image, and moves ``metadata_offset`` to the snapshot's last offset; one older
than what was replayed is ignored. Once replicas run, every partition the old or the new
image gives this broker is compared (a snapshot folds in changes no batch told).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.kraft.broker import alter_partition
from fsm.kraft.broker.effects import DeleteReplica, KRaftBrokerEffect
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded, PartitionKey
from fsm.kraft.broker.replicas import reconcile, wanted
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.image import image_from_records
from fsm.kraft.records.values import PartitionChangeRecord, PartitionRecord, RemoveTopicRecord
from fsm.raft.messages import LeaderChange

if TYPE_CHECKING:
    from fsm.kraft.broker.core import KRaftBroker

S = KRaftBrokerState
_REPLICAS_RUN = frozenset({S.RECOVERY, S.RUNNING, S.PENDING_CONTROLLED_SHUTDOWN})


def fetched(core: KRaftBroker, ev: MetadataFetched) -> list[KRaftBrokerEffect]:
    if core._state is S.SHUTTING_DOWN:
        return core._ignore("MetadataFetched")
    base, records = ev.base_offset, ev.records
    if base > core._offset + 1:
        return core._ignore(f"MetadataFetched at {base}: a gap after {core._offset}")
    skip = core._offset + 1 - base
    apply = core._image.apply
    touched: dict[PartitionKey, None] = {}
    done = core._offset  # the last offset replayed, kept if a record does not replay
    try:
        for offset, record in enumerate(records[skip:], start=base + skip):
            kind = type(record)
            if kind is PartitionChangeRecord or kind is PartitionRecord:  # the many
                apply(record)
                touched[(record.topic_id, record.partition_id)] = None
            elif kind is RemoveTopicRecord:
                touched.update((k, None) for k in core._replicas if k[0] == record.topic_id)
                apply(record)
            elif kind is not LeaderChange:
                apply(record)
            done = offset
    finally:
        core._offset = done
    if core._state not in _REPLICAS_RUN:
        return []
    effects: list[KRaftBrokerEffect] = []
    broker_id, image, replicas = core.config.broker_id, core._image, core._replicas
    for key in touched:
        want = wanted(broker_id, image.partition(*key))
        if want is not None or key in replicas:  # else: neither held nor to hold
            effects += reconcile(replicas, key, want)
    alter_partition.forget_stale(core, touched)
    return effects


def snapshot_loaded(core: KRaftBroker, ev: MetadataSnapshotLoaded) -> list[KRaftBrokerEffect]:
    if core._state is S.SHUTTING_DOWN:
        return core._ignore("MetadataSnapshotLoaded")
    if ev.end_offset - 1 <= core._offset:
        return core._ignore(f"snapshot ending at {ev.end_offset}: replayed to {core._offset}")
    image = image_from_records(ev.records)
    core._image, core._offset = image, ev.end_offset - 1
    if core._state not in _REPLICAS_RUN:
        return []
    broker_id = core.config.broker_id
    keys: dict[PartitionKey, None] = dict.fromkeys(core._replicas)
    for topic_id, topic in image.topics.items():
        for partition_id, p in topic.partitions.items():
            if broker_id in p.replicas:
                keys[(topic_id, partition_id)] = None
    effects: list[KRaftBrokerEffect] = []
    for key in sorted(keys):
        effects += reconcile(core._replicas, key, wanted(broker_id, image.partition(*key)))
    alter_partition.forget_stale(core, keys)
    return effects


def recover(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    """At the start of RECOVERY: delete the stray local replicas, start the assigned ones."""
    image, broker_id = core._image, core.config.broker_id
    effects: list[KRaftBrokerEffect] = [
        DeleteReplica(*key) for key in sorted(core._local)
        if wanted(broker_id, image.partition(*key)) is None]
    core._local = frozenset()
    for topic_id, topic in image.topics.items():
        for partition_id, p in topic.partitions.items():
            if broker_id in p.replicas:
                key = (topic_id, partition_id)
                effects += reconcile(core._replicas, key, wanted(broker_id, p))
    return effects
