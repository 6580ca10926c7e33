"""Our payload bytes against kio's generic flexible-version serializer (``kio.serial``).

kio 0.5 ships no KRaft metadata record classes (only the KRaft control records: LeaderChange,
SnapshotHeader/Footer, KRaftVersion, Voters), so the records are declared here the way kio's
generated classes are, from Kafka's released JSON schemas (v0; v1 of RegisterBroker and
BrokerRegistrationChange), independently of ``fsm.kraft.records.schema``; kio then writes
them with its own primitives, tag ordering and default omission. Our fields are in Kafka's
order, so values convert by position."""

# no ``from __future__ import annotations``: kio reads the annotations as types
import dataclasses
import io
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records_strategies import record_of

from fsm.kraft.records import SCHEMAS, encode_record, record_version

kio_serial = pytest.importorskip("kio.serial")
from kio.static.primitive import f64, i8, i16, i32, i64, u16  # noqa: E402


def k(kafka_type: str, tag: int | None = None) -> dict[str, Any]:
    return {"kafka_type": kafka_type} | ({} if tag is None else {"tag": tag})


def flexible(cls: type) -> type:
    cls.__flexible__ = True  # type: ignore[attr-defined]
    return dataclass(frozen=True)(cls)


@flexible
class BrokerEndpoint:
    __flexible__: ClassVar[bool]
    name: str = field(metadata=k("string"))
    host: str = field(metadata=k("string"))
    port: u16 = field(metadata=k("uint16"))
    security_protocol: i16 = field(metadata=k("int16"))


@flexible
class BrokerFeature:
    name: str = field(metadata=k("string"))
    min_supported_version: i16 = field(metadata=k("int16"))
    max_supported_version: i16 = field(metadata=k("int16"))


@flexible
class RegisterBrokerRecordV0:
    broker_id: i32 = field(metadata=k("int32"))
    incarnation_id: uuid.UUID = field(metadata=k("uuid"))
    broker_epoch: i64 = field(metadata=k("int64"))
    end_points: tuple[BrokerEndpoint, ...]
    features: tuple[BrokerFeature, ...]
    rack: str | None = field(metadata=k("string"))
    fenced: bool = field(metadata=k("bool"))


@flexible
class RegisterBrokerRecordV1:
    broker_id: i32 = field(metadata=k("int32"))
    incarnation_id: uuid.UUID = field(metadata=k("uuid"))
    broker_epoch: i64 = field(metadata=k("int64"))
    end_points: tuple[BrokerEndpoint, ...]
    features: tuple[BrokerFeature, ...]
    rack: str | None = field(metadata=k("string"))
    fenced: bool = field(metadata=k("bool"))
    in_controlled_shutdown: bool = field(metadata=k("bool"))


@flexible
class UnregisterBrokerRecord:
    broker_id: i32 = field(metadata=k("int32"))
    broker_epoch: i64 = field(metadata=k("int64"))


@flexible
class TopicRecord:
    name: str = field(metadata=k("string"))
    topic_id: uuid.UUID = field(metadata=k("uuid"))


@flexible
class PartitionRecord:
    partition_id: i32 = field(metadata=k("int32"))
    topic_id: uuid.UUID = field(metadata=k("uuid"))
    replicas: tuple[i32, ...] = field(metadata=k("int32"))
    isr: tuple[i32, ...] = field(metadata=k("int32"))
    removing_replicas: tuple[i32, ...] = field(metadata=k("int32"))
    adding_replicas: tuple[i32, ...] = field(metadata=k("int32"))
    leader: i32 = field(metadata=k("int32"))
    leader_epoch: i32 = field(metadata=k("int32"))
    partition_epoch: i32 = field(metadata=k("int32"))


@flexible
class ConfigRecord:
    resource_type: i8 = field(metadata=k("int8"))
    resource_name: str = field(metadata=k("string"))
    name: str = field(metadata=k("string"))
    value: str | None = field(metadata=k("string"))


@flexible
class PartitionChangeRecord:
    partition_id: i32 = field(metadata=k("int32"))
    topic_id: uuid.UUID = field(metadata=k("uuid"))
    isr: tuple[i32, ...] | None = field(metadata=k("int32", 0), default=None)
    leader: i32 = field(metadata=k("int32", 1), default=i32(-2))
    replicas: tuple[i32, ...] | None = field(metadata=k("int32", 2), default=None)
    removing_replicas: tuple[i32, ...] | None = field(metadata=k("int32", 3), default=None)
    adding_replicas: tuple[i32, ...] | None = field(metadata=k("int32", 4), default=None)


@flexible
class AccessControlRecord:
    resource_type: i8 = field(metadata=k("int8"))
    resource_name: str | None = field(metadata=k("string"))
    pattern_type: i8 = field(metadata=k("int8"))
    principal: str = field(metadata=k("string"))
    host: str = field(metadata=k("string"))
    operation: i8 = field(metadata=k("int8"))
    permission_type: i8 = field(metadata=k("int8"))


@flexible
class FenceBrokerRecord:
    id: i32 = field(metadata=k("int32"))
    epoch: i64 = field(metadata=k("int64"))


@flexible
class RemoveTopicRecord:
    topic_id: uuid.UUID = field(metadata=k("uuid"))


@flexible
class DelegationTokenRecord:
    owner: str = field(metadata=k("string"))
    renewers: tuple[str, ...] = field(metadata=k("string"))
    issue_timestamp: i64 = field(metadata=k("int64"))
    max_timestamp: i64 = field(metadata=k("int64"))
    expiration_timestamp: i64 = field(metadata=k("int64"))
    token_id: str = field(metadata=k("string"))


@flexible
class CredentialInfo:
    mechanism: i8 = field(metadata=k("int8"))
    salt: bytes = field(metadata=k("bytes"))
    salted_password: bytes = field(metadata=k("bytes"))
    iterations: i32 = field(metadata=k("int32"))


@flexible
class UserScramCredentialRecord:
    name: str = field(metadata=k("string"))
    credential_infos: tuple[CredentialInfo, ...]


@flexible
class FeatureLevelRecord:
    name: str = field(metadata=k("string"))
    min_feature_level: i16 = field(metadata=k("int16"))
    max_feature_level: i16 = field(metadata=k("int16"))


@flexible
class TopicWithFailures:
    topic_id: uuid.UUID = field(metadata=k("uuid"))
    partitions: tuple[i32, ...] = field(metadata=k("int32"))


@flexible
class FailedReplicasRecord:
    broker_id: i32 = field(metadata=k("int32"))
    topics: tuple[TopicWithFailures, ...]


@flexible
class EntityData:
    entity_type: str = field(metadata=k("string"))
    entity_name: str | None = field(metadata=k("string"))


@flexible
class ClientQuotaRecord:
    entity: tuple[EntityData, ...]
    key: str = field(metadata=k("string"))
    value: f64 = field(metadata=k("float64"))
    remove: bool = field(metadata=k("bool"))


@flexible
class BrokerRegistrationChangeRecordV0:
    broker_id: i32 = field(metadata=k("int32"))
    broker_epoch: i64 = field(metadata=k("int64"))
    fenced: i8 = field(metadata=k("int8", 0), default=i8(0))


@flexible
class BrokerRegistrationChangeRecordV1:
    broker_id: i32 = field(metadata=k("int32"))
    broker_epoch: i64 = field(metadata=k("int64"))
    fenced: i8 = field(metadata=k("int8", 0), default=i8(0))
    in_controlled_shutdown: i8 = field(metadata=k("int8", 1), default=i8(0))


KIO = {0: (RegisterBrokerRecordV0, RegisterBrokerRecordV1), 1: (UnregisterBrokerRecord,),
       2: (TopicRecord,), 3: (PartitionRecord,), 4: (ConfigRecord,),
       5: (PartitionChangeRecord,), 6: (AccessControlRecord,), 7: (FenceBrokerRecord,),
       8: (FenceBrokerRecord,), 9: (RemoveTopicRecord,), 10: (DelegationTokenRecord,),
       11: (UserScramCredentialRecord,), 12: (FeatureLevelRecord,),
       13: (FailedReplicasRecord,), 14: (ClientQuotaRecord,),
       17: (BrokerRegistrationChangeRecordV0, BrokerRegistrationChangeRecordV1)}


def to_kio(cls: type, value: Any) -> Any:
    """Our value as an instance of the kio-style ``cls``, field by field in order (a field
    of a later version, which ``cls`` lacks, is left out)."""
    ours = [getattr(value, f.name) for f in dataclasses.fields(value)]
    return cls(*[_convert(f.type, v) for f, v in zip(dataclasses.fields(cls), ours,
                                                       strict=False)])


def _convert(t: Any, v: Any) -> Any:
    if v is None:
        return None
    args = getattr(t, "__args__", ())
    if type(None) in args:  # X | None
        t = next(a for a in args if a is not type(None))
        args = getattr(t, "__args__", ())
    if t is uuid.UUID:
        return uuid.UUID(bytes=v)
    if dataclasses.is_dataclass(t):
        return to_kio(t, v)
    if isinstance(v, tuple):  # tuple[item, ...]
        return tuple(_convert(args[0], x) for x in v)
    return v


def kio_bytes(value: Any) -> bytes:
    type_id = type(value).TYPE
    cls = KIO[type_id][record_version(value)]
    buffer = io.BytesIO()
    kio_serial.entity_writer(cls)(buffer, to_kio(cls, value))
    return buffer.getvalue()


@pytest.mark.parametrize("type_id", sorted(SCHEMAS), ids=[SCHEMAS[t].json_type
                                                          for t in sorted(SCHEMAS)])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_our_payload_is_kios(type_id: int, data: st.DataObject) -> None:
    value = data.draw(record_of(type_id))
    ours = encode_record(value)
    assert ours[:3] == bytes((1, type_id, record_version(value)))  # frame 1: Kafka's
    assert ours[3:].hex(" ") == kio_bytes(value).hex(" ")
