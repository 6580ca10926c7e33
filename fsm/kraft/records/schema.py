"""The metadata records' Kafka schema: per record type its fields' wire types, tags,
versions and JSON names, and the record's dump-log type name. The codec (``codec``) and the
JSON form (``json_form``) are both driven by this table; the values (``values``) stay plain.

Facts from Kafka's released schemas (``metadata/src/main/resources/common/metadata``): every
record is a flexible version from v0 (compact strings and arrays, a tagged-field section at
the end of every struct, nested ones included); PartitionChangeRecord's ``isr``, ``leader``,
``replicas``, ``removing_replicas``, ``adding_replicas`` are tags 0-4; BrokerRegistrationChange's
``fenced`` is tag 0 and ``in_controlled_shutdown`` tag 1 (v1+); RegisterBroker's
``in_controlled_shutdown`` is an ordinary field of v1+.

A field's default (what a tagged field is omitted at, and what a field gets in a version that
lacks it) is the dataclass field's default in ``values``: one source, checked at import.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from fsm.kraft.records import values as V


@dataclass(frozen=True, slots=True)
class Scalar:
    """A fixed-width or length-prefixed value: ``int8`` ``int16`` ``int32`` ``int64``
    ``uint16`` ``bool`` ``float64`` ``string`` ``bytes`` ``uuid``."""

    kind: str
    nullable: bool = False  # strings only: compact length 0 is null


@dataclass(frozen=True, slots=True)
class Array:
    """A compact array (unsigned varint N+1, 0 = null). ``null_as_empty``: a null read from
    bytes or JSON becomes ``()`` (Kafka 2.8 wrote PartitionRecord's adding/removing replicas
    as nullable; later releases, and we, write ``[]``)."""

    item: Scalar | Struct
    nullable: bool = False
    null_as_empty: bool = False


@dataclass(frozen=True, slots=True)
class Field:
    name: str  # the Python attribute (Kafka's name in snake_case)
    type: Scalar | Array | Struct
    json_name: str
    min_version: int = 0
    tag: int | None = None  # a tagged field: written only when it differs from its default
    default: object = None  # filled in from the dataclass by ``_struct``


@dataclass(frozen=True, slots=True)
class Struct:
    cls: type
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class RecordSchema:
    type_id: int
    json_type: str  # Kafka's MetadataRecordType name, as dump-log prints it
    max_version: int
    struct: Struct


INT8, INT16, INT32, INT64 = Scalar("int8"), Scalar("int16"), Scalar("int32"), Scalar("int64")
UINT16, BOOL, FLOAT64 = Scalar("uint16"), Scalar("bool"), Scalar("float64")
STRING, NULLABLE_STRING = Scalar("string"), Scalar("string", nullable=True)
BYTES, UUID = Scalar("bytes"), Scalar("uuid")
INT32S, STRINGS = Array(INT32), Array(STRING)
TAGGED_INT32S = Array(INT32, nullable=True)

MAX_STRING_BYTES = 0x7FFF
"""Kafka's generated code refuses a string longer than this, both ways."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def f(name: str, type_: Scalar | Array | Struct, *, v: int = 0, tag: int | None = None,
      json: str | None = None) -> Field:
    return Field(name, type_, json or camel(name), v, tag)


def _struct(cls: type, *fields: Field) -> Struct:
    """The struct of ``cls``, its fields in the dataclass's order (checked), each with the
    dataclass's default."""
    declared = dataclasses.fields(cls)
    if [d.name for d in declared] != [x.name for x in fields]:
        raise AssertionError(f"{cls.__name__}: schema fields {[x.name for x in fields]} are "
                             f"not the dataclass's {[d.name for d in declared]}")
    filled = []
    for d, x in zip(declared, fields, strict=True):
        has_default = d.default is not dataclasses.MISSING
        if (x.tag is not None or x.min_version > 0) and not has_default:
            raise AssertionError(f"{cls.__name__}.{x.name}: a tagged or versioned field "
                                 "needs a default")
        filled.append(dataclasses.replace(x, default=d.default if has_default else None))
    return Struct(cls, tuple(filled))


def _json_type(cls: type) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).upper()


def _record(cls: type, max_version: int, *fields: Field, json_type: str | None = None
            ) -> RecordSchema:
    return RecordSchema(cls.TYPE, json_type or _json_type(cls), max_version,
                        _struct(cls, *fields))


ENDPOINT = _struct(V.BrokerEndpoint, f("name", STRING), f("host", STRING), f("port", UINT16),
                   f("security_protocol", INT16))
FEATURE = _struct(V.BrokerFeature, f("name", STRING), f("min_supported_version", INT16),
                  f("max_supported_version", INT16))
CREDENTIAL = _struct(V.CredentialInfo, f("mechanism", INT8), f("salt", BYTES),
                     f("salted_password", BYTES), f("iterations", INT32))
TOPIC_FAILURES = _struct(V.TopicWithFailures, f("topic_id", UUID), f("partitions", INT32S))
ENTITY = _struct(V.EntityData, f("entity_type", STRING), f("entity_name", NULLABLE_STRING))

SCHEMAS: dict[int, RecordSchema] = {s.type_id: s for s in (
    _record(V.RegisterBrokerRecord, 1,
            f("broker_id", INT32), f("incarnation_id", UUID), f("broker_epoch", INT64),
            f("end_points", Array(ENDPOINT)), f("features", Array(FEATURE)),
            f("rack", NULLABLE_STRING), f("fenced", BOOL),
            f("in_controlled_shutdown", BOOL, v=1)),
    _record(V.UnregisterBrokerRecord, 0, f("broker_id", INT32), f("broker_epoch", INT64)),
    _record(V.TopicRecord, 0, f("name", STRING), f("topic_id", UUID)),
    _record(V.PartitionRecord, 0,
            f("partition_id", INT32), f("topic_id", UUID), f("replicas", INT32S),
            f("isr", INT32S),
            f("removing_replicas", Array(INT32, null_as_empty=True)),
            f("adding_replicas", Array(INT32, null_as_empty=True)),
            f("leader", INT32), f("leader_epoch", INT32), f("partition_epoch", INT32)),
    _record(V.ConfigRecord, 0,
            f("resource_type", INT8), f("resource_name", STRING), f("name", STRING),
            f("value", NULLABLE_STRING)),
    _record(V.PartitionChangeRecord, 0,
            f("partition_id", INT32), f("topic_id", UUID),
            f("isr", TAGGED_INT32S, tag=0), f("leader", INT32, tag=1),
            f("replicas", TAGGED_INT32S, tag=2), f("removing_replicas", TAGGED_INT32S, tag=3),
            f("adding_replicas", TAGGED_INT32S, tag=4)),
    _record(V.AccessControlRecord, 0,
            f("resource_type", INT8), f("resource_name", NULLABLE_STRING),
            f("pattern_type", INT8), f("principal", STRING), f("host", STRING),
            f("operation", INT8), f("permission_type", INT8)),
    _record(V.FenceBrokerRecord, 0, f("id", INT32), f("epoch", INT64)),
    _record(V.UnfenceBrokerRecord, 0, f("id", INT32), f("epoch", INT64)),
    _record(V.RemoveTopicRecord, 0, f("topic_id", UUID)),
    _record(V.DelegationTokenRecord, 0,
            f("owner", STRING), f("renewers", STRINGS), f("issue_timestamp", INT64),
            f("max_timestamp", INT64), f("expiration_timestamp", INT64),
            f("token_id", STRING)),
    _record(V.UserScramCredentialRecord, 0,
            # released Kafka calls it Name (JSON "name"); the bytes are the same
            f("user_name", STRING, json="name"),
            f("credential_infos", Array(CREDENTIAL))),
    _record(V.FeatureLevelRecord, 0,
            f("name", STRING), f("min_feature_level", INT16), f("max_feature_level", INT16)),
    _record(V.FailedReplicasRecord, 0, f("broker_id", INT32),
            f("topics", Array(TOPIC_FAILURES))),
    _record(V.QuotaRecord, 0,
            f("entity", Array(ENTITY)), f("key", STRING), f("value", FLOAT64),
            f("remove", BOOL), json_type="CLIENT_QUOTA_RECORD"),
    _record(V.BrokerRegistrationChangeRecord, 1,
            f("broker_id", INT32), f("broker_epoch", INT64), f("fenced", INT8, tag=0),
            f("in_controlled_shutdown", INT8, v=1, tag=1)),
)}
"""Record type -> schema, for every type in ``values.RECORD_CLASSES``."""

JSON_TYPE_ALIASES = {"QUOTA_RECORD": 14}
"""Names read as well as Kafka's: type 14 was QuotaRecord in the seed (and our class)."""

BY_CLASS: dict[type, RecordSchema] = {s.struct.cls: s for s in SCHEMAS.values()}
BY_JSON_TYPE: dict[str, RecordSchema] = {
    **{s.json_type: s for s in SCHEMAS.values()},
    **{name: SCHEMAS[t] for name, t in JSON_TYPE_ALIASES.items()},
}

if set(SCHEMAS) != set(V.RECORD_CLASSES) or any(
        SCHEMAS[t].struct.cls is not c for t, c in V.RECORD_CLASSES.items()):
    raise AssertionError("schema.SCHEMAS and values.RECORD_CLASSES disagree")


def lowest_version(schema: RecordSchema, value: object) -> int:
    """The lowest version that carries ``value``: a field of version N+ that differs from
    its default needs N."""
    version = 0
    for field in schema.struct.fields:
        if field.min_version > version and getattr(value, field.name) != field.default:
            version = field.min_version
    return version
