"""The admin socket's view of the committed image's topics: what replay built, after a
partition change (new leader, smaller ISR), in plain JSON values."""

from __future__ import annotations

import json

from adapters.raft_node.image_view import topics_view
from fsm.kraft.image.image import MetadataImage
from fsm.kraft.records.uuid import uuid_to_base64
from fsm.kraft.records.values import PartitionChangeRecord, PartitionRecord, TopicRecord

TID = bytes(range(1, 17))


def test_topics_view_shows_what_replay_built() -> None:
    img = MetadataImage()
    img.apply_all([
        TopicRecord("b-topic", bytes(range(2, 18))),
        TopicRecord("a-topic", TID),
        PartitionRecord(1, TID, (2, 3), (2, 3), leader=2),
        PartitionRecord(0, TID, (1, 2, 3), (1, 2, 3), leader=1),
        PartitionChangeRecord(0, TID, isr=(2, 3), leader=2),
    ])
    view = topics_view(img)
    assert list(view) == ["a-topic", "b-topic"]
    a = view["a-topic"]
    assert a["topic_id"] == uuid_to_base64(TID)
    assert list(a["partitions"]) == ["0", "1"]
    p0 = a["partitions"]["0"]
    assert (p0["leader"], p0["isr"], p0["replicas"]) == (2, [2, 3], [1, 2, 3])
    assert p0["leader_epoch"] == 1 and p0["partition_epoch"] == 1
    assert view["b-topic"]["partitions"] == {}
    assert json.loads(json.dumps(view)) == view
