"""The metadata shell's tree: a ``MetadataImage`` (``fsm/kraft/image``) presented as
directories and files, the way Kafka's ``kafka-metadata-shell.sh`` presents its image. Pure:
an image and its provenance in, an immutable tree out.

The layout is Kafka 3.7's (``org.apache.kafka.image.node``, the shell's ``RootShellNode``;
3.5 moved everything under ``/image``), checked against Kafka's sources::

    /local/version                       kcontrol's version (Kafka: the shell's version)
    /local/source                        where the image was read from (ours)
    /image/provenance                    offset O, epoch E, time T of the last record in it
    /image/features/metadataVersion      the metadata.version feature's level
    /image/features/finalized_<name>     every other feature's finalized level
    /image/cluster/brokers/<id>          a broker's registration (a file)
    /image/cluster/controllers/          empty: controllers do not register in seed 004
    /image/topics/byName/<name>/name|id|<partition>
    /image/topics/byId/<id>/name|id|<partition>
    /image/configs/<TYPE>[:<name>]/<key> a config value (TOPIC:bar/cleanup.policy)
    /image/clientQuotas/<entity>/<key>   clientId(..)_ip(..)_user(..), as Kafka names them
    /image/acls/<n>                      an ACL (Kafka: /image/acls/<uuid>; seed 004's ACL
                                         record has no id, so they are numbered in order)
    /image/scram/<mechanism>/<user>      a SCRAM credential's iterations (the rest redacted)
    /image/delegationToken/<tokenId>     a delegation token
    /image/failedReplicas/<brokerId>     seed 004's FailedReplicasRecord (not in Kafka)

Where Kafka prints a Java ``toString`` (a partition's ``PartitionRegistration(...)``, a
broker's ``BrokerRegistration(...)``) this tree holds the record's JSON as dump-log prints its
``data`` (``fsm.kraft.records.json_form``): ``cat`` of a partition prints
``{"partitionId":0,"topicId":"..","replicas":[1,2],"isr":[1,2],...,"leader":1,
"leaderEpoch":0,"partitionEpoch":0}``. A feature's level is the record's maximum level (seed
004's FeatureLevelRecord has a range where Kafka's has one level). Kafka's
``/image/producerIds`` is left out: seed 004's image has none."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fsm.kraft.image import MetadataImage
from fsm.kraft.records.json_form import record_to_json
from fsm.kraft.records.uuid import uuid_to_base64

METADATA_VERSION = "metadata.version"
CONFIG_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER",
                16: "CLIENT_METRICS", 32: "GROUP"}
"""Kafka's ``ConfigResource.Type`` names by id."""
QUOTA_ENTITIES = (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))
"""Kafka's quota entity types, in the order its shell names them."""
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


@dataclass(frozen=True, slots=True)
class Leaf:
    """A file: ``cat`` prints its text."""

    text: str


@dataclass(frozen=True, slots=True)
class Dir:
    """A directory: its children by name."""

    children: Mapping[str, Leaf | Dir]

    def names(self) -> list[str]:
        return sorted(self.children)


Node = Leaf | Dir


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where the image stands: its last record's offset and epoch, and that record's time
    (Kafka's ``MetadataProvenance``). Offset -1: an empty image."""

    last_offset: int = -1
    epoch: int = -1
    time_ms: int = 0

    def text(self) -> str:
        """Kafka's line: ``offset O, epoch E, time 2023-11-14T22:13:20Z[UTC]``."""
        when = datetime.fromtimestamp(self.time_ms / 1000, UTC)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S")
        if self.time_ms % 1000:
            stamp += f".{self.time_ms % 1000:03d}"
        return f"offset {self.last_offset}, epoch {self.epoch}, time {stamp}Z[UTC]"


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _data(record: Any) -> str:
    return _json(record_to_json(record)["data"])


def quota_entity_name(entity: tuple[Any, ...]) -> str:
    """Kafka's name of a quota entity: ``clientId(a)_ip(b)_user(c)`` (the types present, in
    that order, ``\\``, ``(`` and ``)`` escaped)."""
    by_type = {e.entity_type: e.entity_name for e in entity}
    parts = []
    for kafka_type, label in QUOTA_ENTITIES:
        if kafka_type in by_type:
            value = by_type[kafka_type] or ""
            escaped = value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            parts.append(f"{label}({escaped})")
    unknown = sorted(set(by_type) - {t for t, _ in QUOTA_ENTITIES})
    parts += [f"{t}({by_type[t] or ''})" for t in unknown]
    return "_".join(parts)


def _features(image: MetadataImage) -> Dir:
    children: dict[str, Node] = {}
    mv = image.features.get(METADATA_VERSION)
    children["metadataVersion"] = Leaf("unset" if mv is None else str(mv[1]))
    for name, (_, hi) in image.features.items():
        if name != METADATA_VERSION:
            children[f"finalized_{name}"] = Leaf(str(hi))
    return Dir(children)


def _topics(image: MetadataImage) -> Dir:
    by_name: dict[str, Node] = {}
    by_id: dict[str, Node] = {}
    for topic_id, t in image.topics.items():
        tid = uuid_to_base64(topic_id)
        children: dict[str, Node] = {"name": Leaf(t.name), "id": Leaf(tid)}
        for pid, p in t.partitions.items():
            children[str(pid)] = Leaf(_data(p.record(topic_id, pid)))
        node = Dir(children)
        by_name[t.name] = node
        by_id[tid] = node
    return Dir({"byName": Dir(by_name), "byId": Dir(by_id)})


def _configs(image: MetadataImage) -> Dir:
    out: dict[str, Node] = {}
    for (rtype, rname), entries in image.configs.items():
        kind = CONFIG_TYPES.get(rtype, f"TYPE{rtype}")
        out[kind if rname == "" else f"{kind}:{rname}"] = Dir(
            {k: Leaf(v) for k, v in entries.items()})
    return Dir(out)


def _quotas(image: MetadataImage) -> Dir:
    out: dict[str, dict[str, Node]] = {}
    for (entity, key), value in image.quotas.items():
        out.setdefault(quota_entity_name(entity), {})[key] = Leaf(repr(float(value)))
    return Dir({name: Dir(keys) for name, keys in out.items()})


def _scram(image: MetadataImage) -> Dir:
    out: dict[str, dict[str, Node]] = {}
    for user, record in image.scram_credentials.items():
        for info in record.credential_infos:
            mechanism = SCRAM_MECHANISMS.get(info.mechanism, f"MECHANISM{info.mechanism}")
            out.setdefault(mechanism, {})[user] = Leaf(_json(
                {"iterations": info.iterations, "salt": "[redacted]",
                 "saltedPassword": "[redacted]"}))
    return Dir({m: Dir(users) for m, users in out.items()})


def image_node(image: MetadataImage, provenance: Provenance) -> Dir:
    """``/image``."""
    brokers = {str(b): Leaf(_data(r.record())) for b, r in image.brokers.items()}
    acls = sorted(image.acls, key=repr)
    return Dir({
        "provenance": Leaf(provenance.text()),
        "features": _features(image),
        "cluster": Dir({"brokers": Dir(brokers), "controllers": Dir({})}),
        "topics": _topics(image),
        "configs": _configs(image),
        "clientQuotas": _quotas(image),
        "acls": Dir({str(i): Leaf(_data(a)) for i, a in enumerate(acls)}),
        "scram": _scram(image),
        "delegationToken": Dir({k: Leaf(_data(t))
                                for k, t in image.delegation_tokens.items()}),
        "failedReplicas": Dir({str(b): Leaf(_data(r))
                               for b, r in image.failed_replicas.items()}),
    })


def build_tree(image: MetadataImage, provenance: Provenance, *, source: str,
               version: str) -> Dir:
    """The shell's root: ``/local`` (the tool) and ``/image`` (the metadata)."""
    local = Dir({"version": Leaf(version), "source": Leaf(source)})
    return Dir({"local": local, "image": image_node(image, provenance)})
