"""The schema pinned against Kafka's released record schemas (v0; v1 of RegisterBroker and
BrokerRegistrationChange), written out here independently of ``schema.py``: a wrong width,
tag, version or JSON name in the table fails this test."""

from __future__ import annotations

from fsm.kraft.records.schema import SCHEMAS, Array, Scalar, Struct
from fsm.kraft.records.values import RECORD_CLASSES

KAFKA = {
    0: "REGISTER_BROKER_RECORD 0-1: brokerId int32, incarnationId uuid, brokerEpoch int64, "
       "endPoints [{name string, host string, port uint16, securityProtocol int16}], "
       "features [{name string, minSupportedVersion int16, maxSupportedVersion int16}], "
       "rack string?, fenced bool, inControlledShutdown bool v1+",
    1: "UNREGISTER_BROKER_RECORD 0-0: brokerId int32, brokerEpoch int64",
    2: "TOPIC_RECORD 0-0: name string, topicId uuid",
    3: "PARTITION_RECORD 0-0: partitionId int32, topicId uuid, replicas [int32], isr [int32], "
       "removingReplicas [int32], addingReplicas [int32], leader int32, leaderEpoch int32, "
       "partitionEpoch int32",
    4: "CONFIG_RECORD 0-0: resourceType int8, resourceName string, name string, "
       "value string?",
    5: "PARTITION_CHANGE_RECORD 0-0: partitionId int32, topicId uuid, isr [int32]? tag 0, "
       "leader int32 tag 1, replicas [int32]? tag 2, removingReplicas [int32]? tag 3, "
       "addingReplicas [int32]? tag 4",
    6: "ACCESS_CONTROL_RECORD 0-0: resourceType int8, resourceName string?, patternType int8, "
       "principal string, host string, operation int8, permissionType int8",
    7: "FENCE_BROKER_RECORD 0-0: id int32, epoch int64",
    8: "UNFENCE_BROKER_RECORD 0-0: id int32, epoch int64",
    9: "REMOVE_TOPIC_RECORD 0-0: topicId uuid",
    10: "DELEGATION_TOKEN_RECORD 0-0: owner string, renewers [string], issueTimestamp int64, "
        "maxTimestamp int64, expirationTimestamp int64, tokenId string",
    11: "USER_SCRAM_CREDENTIAL_RECORD 0-0: name string, credentialInfos [{mechanism int8, "
        "salt bytes, saltedPassword bytes, iterations int32}]",
    12: "FEATURE_LEVEL_RECORD 0-0: name string, minFeatureLevel int16, maxFeatureLevel int16",
    13: "FAILED_REPLICAS_RECORD 0-0: brokerId int32, topics [{topicId uuid, "
        "partitions [int32]}]",
    14: "CLIENT_QUOTA_RECORD 0-0: entity [{entityType string, entityName string?}], "
        "key string, value float64, remove bool",
    17: "BROKER_REGISTRATION_CHANGE_RECORD 0-1: brokerId int32, brokerEpoch int64, "
        "fenced int8 tag 0, inControlledShutdown int8 v1+ tag 1",
}


def _type(t: Scalar | Array | Struct) -> str:
    if isinstance(t, Scalar):
        return t.kind + ("?" if t.nullable else "")
    if isinstance(t, Array):
        return f"[{_type(t.item)}]" + ("?" if t.nullable else "")
    return "{" + ", ".join(f"{x.json_name} {_type(x.type)}" for x in t.fields) + "}"


def _describe(type_id: int) -> str:
    s = SCHEMAS[type_id]
    fields = []
    for x in s.struct.fields:
        text = f"{x.json_name} {_type(x.type)}"
        if x.min_version:
            text += f" v{x.min_version}+"
        if x.tag is not None:
            text += f" tag {x.tag}"
        fields.append(text)
    return f"{s.json_type} 0-{s.max_version}: " + ", ".join(fields)


def test_every_record_type_has_kafkas_schema() -> None:
    assert set(SCHEMAS) == set(RECORD_CLASSES) == set(KAFKA)
    for type_id, expected in KAFKA.items():
        assert _describe(type_id) == expected


def test_tagged_defaults_are_kafkas() -> None:
    change = {x.name: x.default for x in SCHEMAS[5].struct.fields if x.tag is not None}
    assert change == {"isr": None, "leader": -2, "replicas": None, "removing_replicas": None,
                      "adding_replicas": None}
    flags = {x.name: x.default for x in SCHEMAS[17].struct.fields if x.tag is not None}
    assert flags == {"fenced": 0, "in_controlled_shutdown": 0}
    register = {x.name: x.default for x in SCHEMAS[0].struct.fields}
    assert register["fenced"] is True and register["in_controlled_shutdown"] is False
