"""The metadata records of seed 004 (types 0-14, plus the released BrokerRegistrationChange,
type 17): values in ``values``, Kafka's framed binary form in ``codec``, the dump-log JSON in
``json_form``."""

from fsm.kraft.records.uuid import ZERO_UUID, Uuid, uuid_from_base64, uuid_to_base64
from fsm.kraft.records.values import RECORD_CLASSES, MetadataRecord

__all__ = ["RECORD_CLASSES", "ZERO_UUID", "MetadataRecord", "Uuid", "uuid_from_base64",
           "uuid_to_base64"]
