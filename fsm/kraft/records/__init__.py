"""The metadata records of seed 004 (types 0-14, plus the released BrokerRegistrationChange,
type 17): values in ``values``, their Kafka schema in ``schema``, Kafka's framed binary form
in ``codec`` (primitives in ``wire``), the dump-log JSON in ``json_form``."""

from fsm.kraft.records.codec import (
    FRAME_TYPE,
    FRAME_TYPES_READ,
    MAX_RECORD_BYTES,
    decode_record,
    encode_record,
    record_version,
)
from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.json_form import payload_line, record_from_json, record_to_json
from fsm.kraft.records.schema import SCHEMAS, RecordSchema
from fsm.kraft.records.uuid import ZERO_UUID, Uuid, uuid_from_base64, uuid_to_base64
from fsm.kraft.records.values import RECORD_CLASSES, MetadataRecord

__all__ = ["FRAME_TYPE", "FRAME_TYPES_READ", "MAX_RECORD_BYTES", "RECORD_CLASSES", "SCHEMAS",
           "ZERO_UUID", "MalformedRecord", "MetadataRecord", "RecordSchema", "Uuid",
           "decode_record", "encode_record", "payload_line", "record_from_json",
           "record_to_json", "record_version", "uuid_from_base64", "uuid_to_base64"]
