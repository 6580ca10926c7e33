"""The broker core: what a broker does with controller requests, without I/O.

``BrokerCore(BrokerConfig(broker_id))``; ``handle(event) -> list[BrokerEffect]``; queries
``state``, ``epoch``, ``controller_epoch``, ``controller_id``, ``replica(tp)``,
``replicas()``, ``believes_leader(tp)``, ``can_commit_view(tp)``, ``metadata_cache``,
``topic_metadata(topics)``, ``applied``/``applied_ok()``, ``applied_log``;
``snapshot()`` / ``BrokerCore.restore(snap, config)``. See ``core`` for the module map.
"""

from fsm.broker.config import BrokerConfig
from fsm.broker.core import BrokerCore
from fsm.broker.metadata_cache import MetadataView, TopicMetadata
from fsm.broker.views import (
    AppliedMark,
    AppliedRecord,
    BrokerLogRecord,
    CommitView,
    MetadataPartition,
    PendingWrite,
    ReplicaRole,
    ReplicaView,
)

__all__ = [
    "AppliedMark",
    "AppliedRecord",
    "BrokerConfig",
    "BrokerCore",
    "BrokerLogRecord",
    "CommitView",
    "MetadataPartition",
    "MetadataView",
    "PendingWrite",
    "ReplicaRole",
    "ReplicaView",
    "TopicMetadata",
]
