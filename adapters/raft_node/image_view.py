"""The committed image's topics as the admin socket shows them (``{"op": "topics"}``): plain
JSON values -- what the stock-client tests and the demo compare a client's answers with."""

from __future__ import annotations

from typing import Any

from fsm.kraft.image.image import MetadataImage
from fsm.kraft.records.uuid import uuid_to_base64


def topics_view(image: MetadataImage) -> dict[str, Any]:
    """name -> ``{"topic_id", "partitions": {"<index>": {"leader", "leader_epoch",
    "partition_epoch", "replicas", "isr"}}}``, topics and partitions sorted."""
    out: dict[str, Any] = {}
    for t in sorted(image.topics.values(), key=lambda t: t.name):
        out[t.name] = {"topic_id": uuid_to_base64(t.topic_id), "partitions": {
            str(i): {"leader": p.leader, "leader_epoch": p.leader_epoch,
                     "partition_epoch": p.partition_epoch, "replicas": list(p.replicas),
                     "isr": list(p.isr)}
            for i, p in sorted(t.partitions.items())}}
    return out
