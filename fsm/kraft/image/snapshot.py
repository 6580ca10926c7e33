"""A snapshot: the smallest list of records that describes an image, in a fixed order
(features, brokers, topics each followed by its partitions, configs, then the rest), so equal
images give equal snapshots. Replaying it onto an empty image gives an equal image."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsm.kraft.image.image import MetadataImage
from fsm.kraft.records.values import ConfigRecord, FeatureLevelRecord, QuotaRecord, TopicRecord


def snapshot_records(image: MetadataImage) -> list[Any]:
    out: list[Any] = [FeatureLevelRecord(name, lo, hi)
                      for name, (lo, hi) in sorted(image.features.items())]
    out += [image.brokers[b].record() for b in sorted(image.brokers)]
    for name in sorted(image.topic_ids):
        t = image.topics[image.topic_ids[name]]
        out.append(TopicRecord(t.name, t.topic_id))
        out += [t.partitions[p].record(t.topic_id, p) for p in sorted(t.partitions)]
    for (rtype, rname) in sorted(image.configs):
        entries = image.configs[(rtype, rname)]
        out += [ConfigRecord(rtype, rname, k, entries[k]) for k in sorted(entries)]
    out += sorted(image.acls, key=repr)
    out += [image.delegation_tokens[k] for k in sorted(image.delegation_tokens)]
    out += [image.scram_credentials[k] for k in sorted(image.scram_credentials)]
    out += [image.failed_replicas[k] for k in sorted(image.failed_replicas)]
    out += [QuotaRecord(entity, key, value, False)
            for (entity, key), value in sorted(image.quotas.items(), key=repr)]
    return out


def image_from_records(records: Iterable[Any]) -> MetadataImage:
    image = MetadataImage()
    image.apply_all(records)
    return image
