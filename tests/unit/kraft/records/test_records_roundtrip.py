"""Every record type through bytes and through JSON, and back: decode(encode(v)) == v,
encode(decode(b)) == b, JSON text round trips, and the version written is the lowest that
carries the value."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records_strategies import record_of

from fsm.kraft.records import (
    SCHEMAS,
    decode_record,
    encode_record,
    record_from_json,
    record_to_json,
    record_version,
)

TYPES = sorted(SCHEMAS)


@pytest.mark.parametrize("type_id", TYPES, ids=[SCHEMAS[t].json_type for t in TYPES])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_bytes_round_trip_and_canonical(type_id: int, data: st.DataObject) -> None:
    value = data.draw(record_of(type_id))
    raw = encode_record(value)
    assert raw[:2] == bytes((1, type_id))
    assert raw[2] == record_version(value)
    back = decode_record(raw)
    assert back == value
    assert type(back) is type(value)
    assert encode_record(back) == raw


@pytest.mark.parametrize("type_id", TYPES, ids=[SCHEMAS[t].json_type for t in TYPES])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_json_round_trip_through_text(type_id: int, data: st.DataObject) -> None:
    value = data.draw(record_of(type_id))
    doc = record_to_json(value)
    assert list(doc) == ["type", "version", "data"]
    assert doc["type"] == SCHEMAS[type_id].json_type
    assert doc["version"] == record_version(value)
    text = json.dumps(doc)
    back = record_from_json(json.loads(text))
    assert back == value
    assert record_to_json(back) == doc
    assert encode_record(back) == encode_record(value)


def test_versions_are_the_lowest_that_carry_the_value() -> None:
    from fsm.kraft.records.uuid import uuid_of
    from fsm.kraft.records.values import BrokerRegistrationChangeRecord, RegisterBrokerRecord

    reg = RegisterBrokerRecord(1, uuid_of(1), 5)
    assert record_version(reg) == 0
    assert record_version(RegisterBrokerRecord(1, uuid_of(1), 5, in_controlled_shutdown=True)) == 1
    assert record_version(BrokerRegistrationChangeRecord(1, 5, fenced=1)) == 0
    assert record_version(BrokerRegistrationChangeRecord(1, 5, fenced=-1)) == 0
    assert record_version(BrokerRegistrationChangeRecord(1, 5, in_controlled_shutdown=1)) == 1
    assert record_to_json(BrokerRegistrationChangeRecord(1, 5, in_controlled_shutdown=1)) == {
        "type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 1,
        "data": {"brokerId": 1, "brokerEpoch": 5, "inControlledShutdown": 1}}
