"""Client Metadata answered from the replayed image: committed state only, since the broker
replays committed records only.

Brokers: the registered brokers that are not fenced (seed 004: "A broker only appears in
MetadataResponse if it is in the registered and active state"). A broker in controlled
shutdown is still listed, as Kafka's ``KRaftMetadataCache`` lists every unfenced broker: it
is registered and unfenced, and it may still lead partitions until the controller has moved
them, so clients must be able to reach it. The controller id is the lowest live broker id
(KIP-590: clients send controller requests to any broker, which forwards them; Kafka picks a
random live broker, a pure core picks deterministically), or None with no live broker.

Topics: ``None`` asks for every topic (by name); a topic the image does not hold is
UNKNOWN_TOPIC_OR_PARTITION. Each partition in the ZooKeeper mode's values
(``MetadataPartition``): a leader that is not a live broker (or -1) is shown as -1, which the
wire answer turns into LEADER_NOT_AVAILABLE (``adapters.network.broker_handler``); the
replicas and ISR in full; the offline replicas are those on fenced or unregistered brokers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.broker.metadata_cache import TopicMetadata
from fsm.broker.views import MetadataPartition
from fsm.errors import ErrorCode
from fsm.kraft.broker.effects import KRaftBrokerEffect, MetadataAnswer, ReplyMetadata
from fsm.kraft.broker.events import MetadataRequest
from fsm.kraft.image import MetadataImage
from fsm.kraft.records.values import NO_LEADER, BrokerEndpoint
from fsm.values import BrokerInfo, Endpoint

if TYPE_CHECKING:
    from fsm.kraft.broker.core import KRaftBroker

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
"""Kafka's ``SecurityProtocol`` ids (as in RegisterBrokerRecord) -> names."""


def answer(core: KRaftBroker, ev: MetadataRequest) -> list[KRaftBrokerEffect]:
    return [ReplyMetadata(ev.token, metadata_answer(core._image, core.config.cluster_id,
                                                    ev.topics))]


def metadata_answer(image: MetadataImage, cluster_id: str,
                    topics: tuple[str, ...] | None) -> MetadataAnswer:
    live = {b: reg for b, reg in sorted(image.brokers.items()) if not reg.fenced}
    brokers = tuple(BrokerInfo(b, reg.epoch, tuple(_endpoint(e) for e in reg.end_points),
                               reg.rack) for b, reg in live.items())
    names = sorted(image.topic_ids) if topics is None else list(dict.fromkeys(topics))
    out = []
    for name in names:
        topic = image.topic(name) if isinstance(name, str) else None
        if topic is None:
            out.append(TopicMetadata(str(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        parts = []
        for pid, p in sorted(topic.partitions.items()):
            leader = p.leader if p.leader in live else NO_LEADER
            offline = tuple(r for r in p.replicas if r not in live)
            parts.append((pid, MetadataPartition(leader, p.leader_epoch, p.isr, p.replicas,
                                                 offline)))
        out.append(TopicMetadata(name, ErrorCode.NONE, tuple(parts)))
    return MetadataAnswer(cluster_id, next(iter(live), None), brokers, tuple(out))


def _endpoint(e: BrokerEndpoint) -> Endpoint:
    return Endpoint(e.name, e.host, e.port,
                    SECURITY_PROTOCOLS.get(e.security_protocol, str(e.security_protocol)))
