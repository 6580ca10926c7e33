"""Kafka's znode data, byte for byte: encode ``fsm`` values to Kafka's JSON and decode it back.

Modules: this package (the dispatch), ``encoders``, ``decoders``, ``values`` (values the core
lacks), ``fields`` (strict JSON field readers), ``paths`` (path -> kind), ``errors``.

One codec per znode kind of ``reference/kafka-zookeeper-layout.md``; ``decode(path, data)`` and
``encode(path, value)`` pick the codec from the path (``paths.classify``). JSON is written
like Kafka's Jackson writes it: compact separators, the reference's key order, UTF-8.

Decoding is strict about what Kafka could have written (types, ranges, versions, duplicates) and
raises ``ZnodeDecodeError(path, reason)`` for anything else; unknown *fields* are ignored, as
Kafka's readers ignore them. Choices worth knowing:

- ``/brokers/topics/<t>`` is always written as version 2, with ``adding_replicas`` and
  ``removing_replicas`` present (``{}`` when empty): that is what Kafka 2.4+ writes
  (``TopicZNode.encode``), whatever is in flight. Versions 1 and 2 are read; version 3 (Kafka
  2.8+, with ``topic_id``) is refused, since ``TopicAssignment`` has no field to keep the id in.
- ``/brokers/ids/<id>`` is written as version 4 (``BrokerRegistration`` has no ``features``);
  versions 4 and 5 are read (v5's ``features`` must be an object and is dropped). ``host``/``port``
  are those of the listener named PLAINTEXT (the reference's example), else of the first endpoint
  whose security protocol is PLAINTEXT (Kafka's ``BrokerIdZNode.encode``), else ``null``/``-1``;
  ``jmx_port`` is written as -1. The broker id comes from the path; the broker epoch is the
  znode's czxid (``broker_info``).
- ``/log_dir_event_notification/...`` and ``/cluster/id`` have no ``fsm`` value yet:
  ``LogDirEventZnode`` and ``ClusterIdZnode`` (``values``, re-exported here) hold them.
- Znodes Kafka leaves empty (``/admin/delete_topics/<t>``, ``/brokers/seqid``, parents) decode
  to ``EmptyZnode()`` whatever they hold: Kafka never reads their data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapters.zookeeper.codec import paths
from adapters.zookeeper.codec.decoders import (
    decode_broker,
    decode_cluster_id,
    decode_controller,
    decode_controller_epoch,
    decode_empty,
    decode_isr_change,
    decode_log_dir_event,
    decode_partition_state,
    decode_preferred_election,
    decode_reassignment,
    decode_topic,
)
from adapters.zookeeper.codec.encoders import (
    encode_broker,
    encode_cluster_id,
    encode_controller,
    encode_controller_epoch,
    encode_empty,
    encode_log_dir_event,
    encode_partition_state,
    encode_partitions,
    encode_reassignment,
    encode_topic,
    plaintext_endpoint,
)
from adapters.zookeeper.codec.errors import ZnodeDecodeError, ZnodeEncodeError
from adapters.zookeeper.codec.values import (
    LOG_DIR_FAILURE,
    SECURITY_PROTOCOLS,
    ClusterIdZnode,
    LogDirEventZnode,
    ZnodeValue,
    broker_info,
)
from fsm.values import LeaderAndIsr, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)

__all__ = [
    "CODECS",
    "LOG_DIR_FAILURE",
    "SECURITY_PROTOCOLS",
    "ClusterIdZnode",
    "LogDirEventZnode",
    "ZnodeDecodeError",
    "ZnodeEncodeError",
    "ZnodeValue",
    "broker_info",
    "decode",
    "encode",
    "plaintext_endpoint",
]

# ---------------------------------------------------------------- dispatch

Codec = tuple[type, Callable[[str, Any], bytes], Callable[[str, bytes | None], Any]]

CODECS: dict[str, Codec] = {
    paths.CONTROLLER: (ControllerZnode, encode_controller, decode_controller),
    paths.CONTROLLER_EPOCH: (
        ControllerEpochZnode,
        encode_controller_epoch,
        decode_controller_epoch,
    ),
    paths.BROKER: (BrokerRegistration, encode_broker, decode_broker),
    paths.TOPIC: (TopicAssignment, encode_topic, decode_topic),
    paths.PARTITION_STATE: (LeaderAndIsr, encode_partition_state, decode_partition_state),
    paths.REASSIGNMENT: (ReassignmentZnode, encode_reassignment, decode_reassignment),
    paths.PREFERRED_ELECTION: (
        PreferredElectionZnode,
        encode_partitions,
        decode_preferred_election,
    ),
    paths.ISR_CHANGE: (IsrChangeZnode, encode_partitions, decode_isr_change),
    paths.LOG_DIR_EVENT: (LogDirEventZnode, encode_log_dir_event, decode_log_dir_event),
    paths.CLUSTER_ID: (ClusterIdZnode, encode_cluster_id, decode_cluster_id),
    paths.EMPTY: (EmptyZnode, encode_empty, decode_empty),
}
"""Znode kind (``paths.classify``) -> (value type, encoder, decoder)."""


def decode(path: str, data: bytes | None) -> ZnodeValue:
    """The value kept at ``path``; ``ZnodeDecodeError`` if ``data`` is not what Kafka writes."""
    kind = paths.classify(path)
    if kind is None:
        raise ZnodeDecodeError(path, "is not a znode of Kafka's layout (no codec for this path)")
    if data is not None and not isinstance(data, bytes | bytearray | memoryview):
        raise ZnodeDecodeError(path, f"data must be bytes, not {type(data).__name__}")
    return CODECS[kind][2](path, bytes(data) if data is not None else None)


def encode(path: str, value: ZnodeValue) -> bytes:
    """Kafka's bytes for ``value`` at ``path``; ``ZnodeEncodeError`` if they do not belong there."""
    kind = paths.classify(path)
    if kind is None:
        raise ZnodeEncodeError(path, "is not a znode of Kafka's layout (no codec for this path)")
    value_type, encoder, _ = CODECS[kind]
    if not isinstance(value, value_type):
        raise ZnodeEncodeError(path, f"holds a {value_type.__name__}, not {value!r}")
    return encoder(path, value)
