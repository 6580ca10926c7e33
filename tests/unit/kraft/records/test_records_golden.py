"""Byte strings worked out by hand from Kafka's flexible-version rules (frame type 1, record
type, version, fields, a tagged section at the end of every struct), and what decode
accepts beyond what encode writes (seed 004's frame type 0, unknown tags, tags in any order)."""

from __future__ import annotations

import pytest

from fsm.kraft.records import decode_record, encode_record
from fsm.kraft.records.uuid import uuid_from_base64, uuid_of
from fsm.kraft.records.values import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    CredentialInfo,
    FenceBrokerRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UserScramCredentialRecord,
)

TOPIC_ID = uuid_from_base64("GU_rXds2FGppL1JqXYpx2g")
TOPIC_ID_HEX = "194feb5ddb36146a692f526a5d8a71da"

GOLDEN = [
    (TopicRecord("bar", TOPIC_ID),
     "01 02 00"                       # frame 1, TopicRecord, v0
     "04 626172"                      # name: compact string, length 3 + 1
     + TOPIC_ID_HEX +                 # topicId: 16 raw bytes
     "00"),                           # no tagged fields
    (PartitionChangeRecord(0, TOPIC_ID, leader=-1),
     "01 05 00 00000000" + TOPIC_ID_HEX +
     "01 01 04 ffffffff"),            # one tagged field: tag 1 (leader), 4 bytes, -1
    (PartitionChangeRecord(7, TOPIC_ID, isr=(1, 2), leader=3),
     "01 05 00 00000007" + TOPIC_ID_HEX +
     "02"                             # two tagged fields, in tag order
     "00 09 03 00000001 00000002"     # tag 0 isr: 9 bytes, compact array of 2
     "01 04 00000003"),               # tag 1 leader
    (PartitionChangeRecord(7, TOPIC_ID, isr=()),
     "01 05 00 00000007" + TOPIC_ID_HEX + "01 00 01 01"),  # isr = [], not null: written
    (FenceBrokerRecord(1, 0), "01 07 00 00000001 0000000000000000 00"),
    (RegisterBrokerRecord(1, uuid_of(7), 10, (BrokerEndpoint("PLAINTEXT", "h", 9092),),
                          fenced=True, in_controlled_shutdown=True),
     "01 00 01"                       # RegisterBrokerRecord v1: in controlled shutdown
     "00000001" "00000000000000000000000000000007" "000000000000000a"
     "02" "0a" + b"PLAINTEXT".hex() + "02 68" "2384" "0000" "00"  # 1 endpoint
     "01"                             # features: empty array
     "00"                             # rack: null
     "01 01"                          # fenced, inControlledShutdown
     "00"),
    (RegisterBrokerRecord(1, uuid_of(7), 10, fenced=False),
     "01 00 00 00000001 00000000000000000000000000000007 000000000000000a 01 01 00 00 00"),
    (UserScramCredentialRecord("u", (CredentialInfo(1, b"\x01\x02", b"", 4096),)),
     "01 0b 00 02 75"
     "02 01 03 0102 01 00001000 00"   # one credential: salt 2 bytes, empty salted password
     "00"),
    (BrokerRegistrationChangeRecord(1, 2, fenced=-1, in_controlled_shutdown=1),
     "01 11 01 00000001 0000000000000002"
     "02 00 01 ff 01 01 01"),         # tag 0 fenced -1, tag 1 inControlledShutdown 1
    (BrokerRegistrationChangeRecord(1, 2, fenced=1),
     "01 11 00 00000001 0000000000000002 01 00 01 01"),
]


@pytest.mark.parametrize(("value", "hex_"), GOLDEN, ids=lambda x: type(x).__name__
                         if not isinstance(x, str) else "")
def test_golden_bytes(value: object, hex_: str) -> None:
    raw = bytes.fromhex(hex_.replace(" ", ""))
    assert encode_record(value).hex(" ") == raw.hex(" ")
    assert decode_record(raw) == value


def test_kafkas_frame_type_1_is_written_and_seed_004s_0_is_read() -> None:
    ours = encode_record(TopicRecord("bar", TOPIC_ID))
    assert ours[0] == 1
    assert decode_record(b"\x00" + ours[1:]) == TopicRecord("bar", TOPIC_ID)


def test_unknown_tags_are_skipped_known_ones_in_any_order() -> None:
    base = bytes.fromhex("00050000000007" + TOPIC_ID_HEX)
    raw = base + bytes.fromhex("03" "09 03 aabbcc" "01 04 00000003" "00 05 02 00000001")
    assert decode_record(raw) == PartitionChangeRecord(7, TOPIC_ID, isr=(1,), leader=3)
    topic = bytes.fromhex("00020004626172" + TOPIC_ID_HEX + "01 05 02 aabb")
    assert decode_record(topic) == TopicRecord("bar", TOPIC_ID)
    # v0 of BrokerRegistrationChange does not know tag 1: skipped, not read
    v0 = bytes.fromhex("00 11 00 00000001 0000000000000002 01 01 01 01")
    assert decode_record(v0) == BrokerRegistrationChangeRecord(1, 2)
