"""The dump-log JSON: seed 004's example lines exactly (key order included), Kafka's JSON
converter rules (tagged fields only when not default, fields of later versions only in those
versions, bytes as standard base64, uuids as URL-safe base64), and bad JSON refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsm.kraft.records import MalformedRecord, payload_line, record_from_json, record_to_json
from fsm.kraft.records.uuid import uuid_from_base64, uuid_of
from fsm.kraft.records.values import (
    BrokerEndpoint,
    CredentialInfo,
    EntityData,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    QuotaRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UserScramCredentialRecord,
)

SEED = Path("/work/shared/seeds/004_cd0bf7472ef579f8.txt")
G = uuid_from_base64("GU_rXds2FGppL1JqXYpx2g")
W = uuid_from_base64("WCnrza5uWKeerYa7HCNpOg")

SEED_LINES = [
    (TopicRecord("bar", G),
     '{"type":"TOPIC_RECORD","version":0,"data":{"name":"bar","topicId":"GU_rXds2FGppL1JqXYpx2g"}}'),
    (PartitionChangeRecord(0, G, leader=-1),
     '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,'
     '"topicId":"GU_rXds2FGppL1JqXYpx2g","leader":-1}}'),
    (PartitionChangeRecord(0, W, leader=-1),
     '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,'
     '"topicId":"WCnrza5uWKeerYa7HCNpOg","leader":-1}}'),
    (FenceBrokerRecord(1, 0), '{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":0}}'),
]


@pytest.mark.parametrize(("value", "line"), SEED_LINES)
def test_the_seeds_example_lines_exactly(value: object, line: str) -> None:
    assert payload_line(value) == line
    assert record_from_json(json.loads(line)) == value
    if SEED.exists():
        assert f" payload: {line}" in SEED.read_text()


def test_the_seeds_partition_record_line_reads_and_prints_as_released_kafka_does() -> None:
    """Seed 004 (and Kafka 2.8) printed null adding/removing replicas; released Kafka's
    PartitionRecord has non-null arrays, so we read null as [] and print []."""
    line = ('{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":0,'
            '"topicId":"GU_rXds2FGppL1JqXYpx2g","replicas":[1],"isr":[1],'
            '"removingReplicas":null,"addingReplicas":null,"leader":1,"leaderEpoch":0,'
            '"partitionEpoch":0}}')
    value = record_from_json(json.loads(line))
    assert value == PartitionRecord(0, G, (1,), (1,), (), (), 1, 0, 0)
    assert payload_line(value) == line.replace("null", "[]")


def test_tagged_fields_only_when_not_default() -> None:
    assert record_to_json(PartitionChangeRecord(3, G))["data"] == {
        "partitionId": 3, "topicId": "GU_rXds2FGppL1JqXYpx2g"}
    assert record_to_json(PartitionChangeRecord(3, G, isr=(), replicas=(1, 2)))["data"] == {
        "partitionId": 3, "topicId": "GU_rXds2FGppL1JqXYpx2g", "isr": [], "replicas": [1, 2]}


def test_later_version_fields_only_in_their_versions() -> None:
    base = RegisterBrokerRecord(1, uuid_of(7), 10, (BrokerEndpoint("PLAINTEXT", "h", 9092),))
    v0 = record_to_json(base)
    assert v0["version"] == 0 and "inControlledShutdown" not in v0["data"]
    assert list(v0["data"]) == ["brokerId", "incarnationId", "brokerEpoch", "endPoints",
                                "features", "rack", "fenced"]
    assert v0["data"]["endPoints"] == [{"name": "PLAINTEXT", "host": "h", "port": 9092,
                                        "securityProtocol": 0}]
    assert v0["data"]["rack"] is None
    v1 = record_to_json(RegisterBrokerRecord(1, uuid_of(7), 10, in_controlled_shutdown=True))
    assert v1["version"] == 1 and v1["data"]["inControlledShutdown"] is True
    assert v1["data"]["incarnationId"] == "AAAAAAAAAAAAAAAAAAAABw"


def test_bytes_are_standard_base64_and_names_are_kafkas() -> None:
    value = UserScramCredentialRecord("alice", (CredentialInfo(1, b"\xfb\xff", b"\x00", 4096),))
    assert record_to_json(value) == {
        "type": "USER_SCRAM_CREDENTIAL_RECORD", "version": 0,
        "data": {"name": "alice", "credentialInfos": [
            {"mechanism": 1, "salt": "+/8=", "saltedPassword": "AA==", "iterations": 4096}]}}
    quota = record_to_json(QuotaRecord((EntityData("user", None),), "k", 2.0, False))
    assert quota["type"] == "CLIENT_QUOTA_RECORD"
    assert quota["data"]["entity"] == [{"entityType": "user", "entityName": None}]
    assert record_from_json({**quota, "type": "QUOTA_RECORD"}) == record_from_json(quota)


GOOD = {"type": "TOPIC_RECORD", "version": 0,
        "data": {"name": "bar", "topicId": "GU_rXds2FGppL1JqXYpx2g"}}


@pytest.mark.parametrize(("doc", "part"), [
    ([], "a record is a JSON object"),
    ({"type": "TOPIC_RECORD", "data": {}}, "keys type, version, data"),
    ({**GOOD, "type": "NO_SUCH_RECORD"}, "unknown record type 'NO_SUCH_RECORD'"),
    ({**GOOD, "version": 1}, "TOPIC_RECORD: unsupported version 1"),
    ({**GOOD, "version": True}, "unsupported version True"),
    ({**GOOD, "data": {"name": "bar"}}, "TOPIC_RECORD field topicId: missing"),
    ({**GOOD, "data": {**GOOD["data"], "x": 1}}, "unknown keys ['x']"),
    ({**GOOD, "data": {**GOOD["data"], "topicId": "short"}}, "field topicId"),
    ({**GOOD, "data": {**GOOD["data"], "name": None}}, "field name: null"),
    ({"type": "FENCE_BROKER_RECORD", "version": 0, "data": {"id": 2**31, "epoch": 0}},
     "FENCE_BROKER_RECORD field id: int32 expected"),
    ({"type": "FENCE_BROKER_RECORD", "version": 0, "data": {"id": 1.0, "epoch": 0}},
     "field id: int32 expected"),
    ({"type": "REGISTER_BROKER_RECORD", "version": 0,
      "data": {"brokerId": 1, "incarnationId": "AAAAAAAAAAAAAAAAAAAABw", "brokerEpoch": 1,
               "endPoints": [{"name": "P", "host": "h", "port": 70000, "securityProtocol": 0}],
               "features": [], "rack": None, "fenced": True}},
     "field endPoints[0].port: uint16 expected"),
    ({"type": "REGISTER_BROKER_RECORD", "version": 0,
      "data": {"brokerId": 1, "incarnationId": "AAAAAAAAAAAAAAAAAAAABw", "brokerEpoch": 1,
               "endPoints": [], "features": [], "rack": None, "fenced": True,
               "inControlledShutdown": True}},
     "unknown keys ['inControlledShutdown']"),
    ({"type": "USER_SCRAM_CREDENTIAL_RECORD", "version": 0,
      "data": {"name": "a", "credentialInfos": [{"mechanism": 1, "salt": "-_8=",
                                                 "saltedPassword": "", "iterations": 1}]}},
     "field credentialInfos[0].salt: not standard base64"),
    ({"type": "CLIENT_QUOTA_RECORD", "version": 0,
      "data": {"entity": [], "key": "k", "value": 1, "remove": 0}},
     "field remove: true or false expected"),
])
def test_bad_json_is_refused_naming_the_field(doc: object, part: str) -> None:
    with pytest.raises(MalformedRecord) as info:
        record_from_json(doc)
    assert part in str(info.value), str(info.value)


def test_to_json_refuses_what_the_codec_refuses() -> None:
    with pytest.raises(ValueError, match=r"^FenceBrokerRecord.id: int32"):
        record_to_json(FenceBrokerRecord(2**31, 0))
