"""The KRaft APIs' codec against kio 0.5 (generated from Kafka's own JSON message schemas),
byte for byte, for every API and version in ``kraft_registry.KRAFT_SUPPORTED``, requests and
responses, as the quorum APIs' cross-check does:

- a value hypothesis draws from our schema (CreateTopics' tagged ``topic_config_error_code``
  included, by name) encodes to the very bytes kio writes for the same value, and reads back
  in kio as that value;
- a value kio generates (``st.from_type``) and writes reads in ours as that value and encodes
  back to kio's bytes;
- whole frames (header v2 / v1 and body) read in kio; flexibility and header versions agree.

Values cross over through a field-by-field mapping that fails on any field one side has and
the other lacks at that version. UUIDs: ours are 16 bytes, kio's ``uuid.UUID`` or None for
the zero UUID.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio import index as kio_index
from kio import serial as kio_serial
from kio.schema import errors as kio_errors
from kio.schema.request_header.v1.header import RequestHeader as KioRequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as KioRequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as KioResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as KioResponseHeaderV1
from kio.serial import _introspect as kio_introspect

from adapters.network.codec import kraft_frames, raft_tags
from adapters.network.codec.apis import create_topics
from adapters.network.codec.kraft_registry import KRAFT_MESSAGES, KRAFT_SUPPORTED, api_name
from adapters.network.codec.primitives import int_bounds
from adapters.network.codec.schema import (
    TAGGED_FIELDS,
    Array,
    Bool,
    Bytes,
    Int,
    Str,
    Struct,
    Type,
    UInt16,
    UuidType,
)
from adapters.network.codec.wire import decode, encode

CASES = [(k, v) for k, (lo, hi) in KRAFT_SUPPORTED.items() for v in range(lo, hi + 1)]
IDS = [f"{api_name(k)}-v{v}" for k, v in CASES]
KINDS = ["request", "response"]
KNOWN_ERROR_CODES = sorted(int(e) for e in kio_errors.ErrorCode)
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FROM_KIO = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(max_size=12)
ZERO = bytes(16)

RENAMES = {"throttle_time": "throttle_time_ms", "timeout": "timeout_ms"}
"""kio field -> ours, where kio names the field by its Python type (timedelta)."""


def our_schema(api_key: int, version: int, kind: str) -> Struct:
    request, response = KRAFT_MESSAGES[api_key]
    return (request if kind == "request" else response).schema(version)


def kio_message(api_key: int, version: int, kind: str) -> type:
    if kind == "request":
        return kio_index.load_request_schema(api_key, version)
    return kio_index.load_response_schema(api_key, version)


def named_tags(api_key: int, kind: str, fields: set[str]) -> tuple[raft_tags.TaggedField, ...]:
    """The named tagged fields our codec declares for this struct, else ()."""
    if api_key == create_topics.API_KEY and kind == "response" and "num_partitions" in fields:
        return create_topics.RESULT_TAGS
    return ()


# -- our values, drawn from our schemas ---------------------------------------------------------


def values(t: Type, api_key: int, kind: str) -> st.SearchStrategy[Any]:
    match t:
        case Int(width=width):
            return st.integers(*int_bounds(width))
        case UInt16():
            return st.integers(0, 0xFFFF)
        case UuidType():
            return st.just(ZERO) | st.binary(min_size=16, max_size=16)
        case Bool():
            return st.booleans()
        case Str():
            return st.none() | TEXT if t.nullable else TEXT
        case Bytes():
            blob = st.binary(max_size=24)
            return st.none() | blob if t.nullable else blob
        case Array(item=item):
            items = st.lists(values(item, api_key, kind), max_size=3)
            return st.none() | items if t.nullable else items
        case Struct(fields=fields):
            names = {f.name for f in fields}
            tags = named_tags(api_key, kind, names)
            plain = {f.name: (st.sampled_from(KNOWN_ERROR_CODES) if f.name == "error_code"
                              else values(f.type, api_key, kind))
                     for f in fields if f.name != TAGGED_FIELDS}
            named = {tf.name: st.just(tf.default) | values(tf.type, api_key, kind)
                     for tf in tags}
            strategy = st.fixed_dictionaries({**plain, **named})
            if TAGGED_FIELDS in names:
                strategy = strategy.map(lambda v, tags=tags: pack(v, tags))
            return strategy
    raise TypeError(t)


def pack(value: dict[str, Any], tags: tuple[raft_tags.TaggedField, ...]) -> dict[str, Any]:
    named = {tf.name: value.pop(tf.name) for tf in tags}
    value[TAGGED_FIELDS] = raft_tags.pack(tags, named)
    return value


# -- crossing over ------------------------------------------------------------------------------


def kio_fields(entity: type) -> tuple[list[dataclasses.Field[Any]], list[dataclasses.Field[Any]]]:
    fields = dataclasses.fields(entity)
    return ([f for f in fields if kio_introspect.get_field_tag(f) is None],
            [f for f in fields if kio_introspect.get_field_tag(f) is not None])


def to_kio(entity: type, value: dict[str, Any], api_key: int, kind: str) -> Any:
    untagged, tagged = kio_fields(entity)
    mapped = {RENAMES.get(f.name, f.name): f for f in untagged}
    assert set(value) - {TAGGED_FIELDS} == set(mapped), f"{entity.__name__}: fields differ"
    out = {f.name: _to_kio_value(f, value[ours], api_key, kind) for ours, f in mapped.items()}
    tags = named_tags(api_key, kind, set(value))
    by_name = {tf.name: tf for tf in tags}
    raw = value.get(TAGGED_FIELDS, {})
    assert {tf.tag for tf in tags} >= set(raw), "kio holds only the tags it declares"
    named = raft_tags.unpack(tags, raw, entity.__name__)
    assert {f.name for f in tagged} == set(by_name), f"{entity.__name__}: tags differ"
    for f in tagged:
        assert by_name[f.name].tag == kio_introspect.get_field_tag(f)
        out[f.name] = named[f.name]
    return entity(**out)


def _to_kio_value(f: dataclasses.Field[Any], v: Any, api_key: int, kind: str) -> Any:
    kafka_type = f.metadata.get("kafka_type")
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField(type_=t):
            return None if v is None else to_kio(t, v, api_key, kind)
        case kio_introspect.EntityTupleField(type_=t):
            return None if v is None else tuple(to_kio(t, x, api_key, kind) for x in v)
        case kio_introspect.PrimitiveTupleField():
            if v is not None and kafka_type == "uuid":
                return tuple(_kio_uuid(x) for x in v)
            return None if v is None else tuple(v)
    if kafka_type == "error_code":
        return kio_errors.ErrorCode(v)
    if kafka_type == "timedelta_i32":
        return datetime.timedelta(milliseconds=v)
    if kafka_type == "uuid":
        return _kio_uuid(v)
    return v


def _kio_uuid(v: bytes) -> uuid.UUID | None:
    return None if v == ZERO else uuid.UUID(bytes=v)


def from_kio(entity: Any) -> dict[str, Any]:
    """A kio value as ours, its tagged fields by name (no raw tag buffers)."""
    untagged, tagged = kio_fields(type(entity))
    out = {RENAMES.get(f.name, f.name): _from_kio_value(f, getattr(entity, f.name))
           for f in untagged}
    for f in tagged:
        out[f.name] = getattr(entity, f.name)
    return out


def _from_kio_value(f: dataclasses.Field[Any], v: Any) -> Any:
    kafka_type = f.metadata.get("kafka_type")
    if kafka_type == "uuid" and not isinstance(v, tuple):
        return ZERO if v is None else v.bytes
    if v is None:
        return None
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField():
            return from_kio(v)
        case kio_introspect.EntityTupleField():
            return [from_kio(x) for x in v]
        case kio_introspect.PrimitiveTupleField():
            if kafka_type == "uuid":
                return [ZERO if x is None else x.bytes for x in v]
            return list(v)
    if isinstance(v, datetime.timedelta):
        return round(v.total_seconds() * 1000)
    if isinstance(v, kio_errors.ErrorCode):
        return int(v)
    return v


def named_view(value: Any, schema: Type, api_key: int, kind: str) -> Any:
    """Our decoded value with its named tags unpacked and raw tag buffers dropped: the form
    ``from_kio`` gives."""
    match schema:
        case Struct(fields=fields):
            names = {f.name for f in fields}
            out = {f.name: named_view(value[f.name], f.type, api_key, kind)
                   for f in fields if f.name != TAGGED_FIELDS}
            tags = named_tags(api_key, kind, names)
            out.update(raft_tags.unpack(tags, value.get(TAGGED_FIELDS, {}), ""))
            return out
        case Array(item=item) if value is not None:
            return [named_view(x, item, api_key, kind) for x in value]
    return value


def kio_encode(entity_type: type, value: Any) -> bytes:
    buf = io.BytesIO()
    kio_serial.entity_writer(entity_type)(buf, value)
    return buf.getvalue()


def kio_decode(entity_type: type, data: bytes) -> Any:
    value, size = kio_serial.entity_reader(entity_type)(memoryview(data), 0)
    assert size == len(data), f"kio read {size} of {len(data)} bytes"
    return value


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
def test_flexibility_and_header_versions_match_kio(api_key: int, version: int) -> None:
    request, response = KRAFT_MESSAGES[api_key]
    for kind, ours in (("request", request), ("response", response)):
        entity = kio_message(api_key, version, kind)
        assert entity.__flexible__ == ours.is_flexible(version)
        assert (entity.__api_key__, entity.__version__) == (api_key, version)
    flexible = request.is_flexible(version)
    assert kio_message(api_key, version, "request").__header_schema__ is (
        KioRequestHeaderV2 if flexible else KioRequestHeaderV1)
    assert kio_message(api_key, version, "response").__header_schema__ is (
        KioResponseHeaderV1 if flexible else KioResponseHeaderV0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data())
def test_our_bytes_are_kio_bytes_and_read_back_in_kio(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    entity_type = kio_message(api_key, version, kind)
    body = data.draw(values(schema, api_key, kind))
    ours = encode(schema, body)
    theirs = to_kio(entity_type, body, api_key, kind)
    assert ours == kio_encode(entity_type, theirs)
    assert kio_decode(entity_type, ours) == theirs


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@FROM_KIO
@given(data=st.data())
def test_kio_bytes_read_in_ours_and_encode_back_to_the_same_bytes(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    entity_type = kio_message(api_key, version, kind)
    theirs = data.draw(st.from_type(entity_type))
    wire = kio_encode(entity_type, theirs)
    ours = decode(schema, wire)
    assert encode(schema, ours) == wire
    assert named_view(ours, schema, api_key, kind) == from_kio(theirs)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@FROM_KIO
@given(data=st.data(), correlation_id=st.integers(*int_bounds(4)),
       client_id=st.none() | TEXT)
def test_whole_frames_read_in_kio(api_key: int, version: int, data: st.DataObject,
                                  correlation_id: int, client_id: str | None) -> None:
    for kind in KINDS:
        body = data.draw(values(our_schema(api_key, version, kind), api_key, kind))
        entity_type = kio_message(api_key, version, kind)
        if kind == "request":
            frame = kraft_frames.encode_request(api_key, version, correlation_id, client_id,
                                                body)
        else:
            frame = kraft_frames.encode_response(api_key, version, correlation_id, body)
        header, size = kio_serial.entity_reader(entity_type.__header_schema__)(
            memoryview(frame), 4)
        assert header.correlation_id == correlation_id
        if kind == "request":
            assert (header.request_api_key, header.request_api_version, header.client_id) == (
                api_key, version, client_id)
        assert kio_decode(entity_type, frame[4 + size:]) == to_kio(entity_type, body, api_key,
                                                                   kind)
