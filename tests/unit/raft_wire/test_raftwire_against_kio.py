"""The quorum APIs' codec against kio 0.5 (generated from Kafka's own JSON message schemas),
byte for byte, for every API and version in ``RAFT_SUPPORTED``, requests and responses:

- a value hypothesis draws from our schema -- named tagged fields included (the cluster id,
  the diverging epoch, the current leader, the snapshot id), packed by
  ``adapters.network.codec.raft_tags`` -- encodes to the very bytes kio writes for the same
  value, and reads back in kio as that value;
- a value kio generates (``st.from_type``) and writes reads in ours as that value (tags
  unpacked by name) and encodes back to kio's bytes;
- whole frames (header v2 / v1 and body) read in kio.

Values cross over through a field-by-field mapping that fails on any field one side has and
the other lacks at that version.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
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
from kio.static.primitive import Records

from adapters.network.codec import raft_frames, raft_tags
from adapters.network.codec.primitives import int_bounds
from adapters.network.codec.raft_registry import (
    PARTITION_TAGS,
    RAFT_MESSAGES,
    RAFT_SUPPORTED,
    REQUEST_TAGS,
    api_name,
)
from adapters.network.codec.schema import (
    TAGGED_FIELDS,
    Array,
    Bool,
    Bytes,
    Int,
    Str,
    Struct,
    Type,
)
from adapters.network.codec.wire import decode, encode

CASES = [(k, v) for k, (lo, hi) in RAFT_SUPPORTED.items() for v in range(lo, hi + 1)]
IDS = [f"{api_name(k)}-v{v}" for k, v in CASES]
KINDS = ["request", "response"]
KNOWN_ERROR_CODES = sorted(int(e) for e in kio_errors.ErrorCode)
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FROM_KIO = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(max_size=12)

st.register_type_strategy(Records, st.binary(max_size=40).map(Records))  # kio registers none

RENAMES = {"throttle_time": "throttle_time_ms", "max_wait": "max_wait_ms"}
"""kio field -> ours, where kio names the field by its Python type (timedelta)."""


def our_schema(api_key: int, version: int, kind: str) -> Struct:
    request, response = RAFT_MESSAGES[api_key]
    return (request if kind == "request" else response).schema(version)


def kio_message(api_key: int, version: int, kind: str) -> type:
    if kind == "request":
        return kio_index.load_request_schema(api_key, version)
    return kio_index.load_response_schema(api_key, version)


def named_tags(api_key: int, kind: str, fields: set[str], top: bool
               ) -> tuple[raft_tags.TaggedField, ...]:
    """The named tagged fields our codec declares for this struct (the request itself, or
    a response's partition), else ()."""
    if kind == "request" and top:
        return REQUEST_TAGS.get(api_key, ())
    if kind == "response" and fields & {"high_watermark", "unaligned_records"}:
        return PARTITION_TAGS.get(api_key, ())
    return ()


# -- our values, drawn from our schemas ---------------------------------------------------------


def values(t: Type, api_key: int, kind: str, top: bool = False) -> st.SearchStrategy[Any]:
    match t:
        case Int(width=width):
            return st.integers(*int_bounds(width))
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
            tags = named_tags(api_key, kind, names, top)
            plain = {f.name: (st.sampled_from(KNOWN_ERROR_CODES) if f.name == "error_code"
                              else values(f.type, api_key, kind))
                     for f in fields if f.name != TAGGED_FIELDS}
            named = {tf.name: st.just(tf.default) | tag_values(tf) for tf in tags}
            strategy = st.fixed_dictionaries({**plain, **named})
            if TAGGED_FIELDS in names:
                strategy = strategy.map(lambda v, tags=tags: pack(v, tags))
            return strategy
    raise TypeError(t)


def tag_values(tf: raft_tags.TaggedField) -> st.SearchStrategy[Any]:
    if isinstance(tf.type, Struct):
        return st.fixed_dictionaries({f.name: st.integers(*int_bounds(f.type.width))
                                      for f in tf.type.fields if isinstance(f.type, Int)})
    return st.none() | TEXT


def pack(value: dict[str, Any], tags: tuple[raft_tags.TaggedField, ...]) -> dict[str, Any]:
    """Our wire value: the named tags packed into the raw tag buffer."""
    named = {tf.name: value.pop(tf.name) for tf in tags}
    value[TAGGED_FIELDS] = raft_tags.pack(tags, named)
    return value


# -- crossing over ------------------------------------------------------------------------------


def kio_fields(entity: type) -> tuple[list[dataclasses.Field[Any]], list[dataclasses.Field[Any]]]:
    fields = dataclasses.fields(entity)
    return ([f for f in fields if kio_introspect.get_field_tag(f) is None],
            [f for f in fields if kio_introspect.get_field_tag(f) is not None])


def to_kio(entity: type, value: dict[str, Any], api_key: int, kind: str, top: bool = False
           ) -> Any:
    untagged, tagged = kio_fields(entity)
    mapped = {RENAMES.get(f.name, f.name): f for f in untagged}
    assert set(value) - {TAGGED_FIELDS} == set(mapped), f"{entity.__name__}: fields differ"
    out = {f.name: _to_kio_value(f, value[ours], api_key, kind) for ours, f in mapped.items()}
    tags = named_tags(api_key, kind, set(value), top)
    by_name = {tf.name: tf for tf in tags}
    raw = value.get(TAGGED_FIELDS, {})
    assert {tf.tag for tf in tags} >= set(raw), "kio holds only the tags it declares"
    named = raft_tags.unpack(tags, raw, entity.__name__)
    for f in tagged:
        tf = by_name[f.name]  # every tag kio declares, ours declares too
        assert tf.tag == kio_introspect.get_field_tag(f)
        v = named[f.name]
        out[f.name] = (to_kio(f.type, {**v, TAGGED_FIELDS: {}}, api_key, kind)
                       if isinstance(v, dict) else v)
    return entity(**out)


def _to_kio_value(f: dataclasses.Field[Any], v: Any, api_key: int, kind: str) -> Any:
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField(type_=t):
            return None if v is None else to_kio(t, v, api_key, kind)
        case kio_introspect.EntityTupleField(type_=t):
            return None if v is None else tuple(to_kio(t, x, api_key, kind) for x in v)
        case kio_introspect.PrimitiveTupleField():
            return None if v is None else tuple(v)
    kafka_type = kio_introspect.get_schema_field_type(f)
    if kafka_type == "error_code":
        return kio_errors.ErrorCode(v)
    if kafka_type == "timedelta_i32":
        return datetime.timedelta(milliseconds=v)
    return v


def from_kio(entity: Any, api_key: int, kind: str, top: bool = False) -> dict[str, Any]:
    """A kio value as ours, its tagged fields by name (no raw tag buffers)."""
    t = type(entity)
    untagged, tagged = kio_fields(t)
    out = {RENAMES.get(f.name, f.name): _from_kio_value(f, getattr(entity, f.name), api_key, kind)
           for f in untagged}
    for f in tagged:
        v = getattr(entity, f.name)
        out[f.name] = from_kio(v, api_key, kind) if dataclasses.is_dataclass(v) else v
    return out


def _from_kio_value(f: dataclasses.Field[Any], v: Any, api_key: int, kind: str) -> Any:
    if v is None:
        return None
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField():
            return from_kio(v, api_key, kind)
        case kio_introspect.EntityTupleField():
            return [from_kio(x, api_key, kind) for x in v]
        case kio_introspect.PrimitiveTupleField():
            return list(v)
    if isinstance(v, datetime.timedelta):
        return round(v.total_seconds() * 1000)
    if isinstance(v, kio_errors.ErrorCode):
        return int(v)
    if isinstance(v, bytes):
        return bytes(v)
    return v


def named_view(value: Any, schema: Type, api_key: int, kind: str, top: bool = False) -> Any:
    """Our decoded value with its named tags unpacked and raw tag buffers dropped: the form
    ``from_kio`` gives."""
    match schema:
        case Struct(fields=fields):
            names = {f.name for f in fields}
            out = {f.name: named_view(value[f.name], f.type, api_key, kind)
                   for f in fields if f.name != TAGGED_FIELDS}
            tags = named_tags(api_key, kind, names, top)
            for name, v in raft_tags.unpack(tags, value.get(TAGGED_FIELDS, {}), "").items():
                out[name] = v
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
    request, response = RAFT_MESSAGES[api_key]
    for kind, ours in (("request", request), ("response", response)):
        entity = kio_message(api_key, version, kind)
        assert entity.__flexible__ == ours.is_flexible(version)
        assert (entity.__api_key__, entity.__version__) == (api_key, version)
    flexible = request.is_flexible(version)
    assert kio_message(api_key, version, "request").__header_schema__ is (
        KioRequestHeaderV2 if flexible else KioRequestHeaderV1)
    assert kio_message(api_key, version, "response").__header_schema__ is (
        KioResponseHeaderV1 if flexible else KioResponseHeaderV0)
    # BeginQuorumEpoch and EndQuorumEpoch v0 are the classic ones (Kafka: flexible from v1)
    assert flexible == (api_key not in (53, 54))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data())
def test_our_bytes_are_kio_bytes_and_read_back_in_kio(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    entity_type = kio_message(api_key, version, kind)
    body = data.draw(values(schema, api_key, kind, top=True))
    ours = encode(schema, body)
    theirs = to_kio(entity_type, body, api_key, kind, top=True)
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
    assert named_view(ours, schema, api_key, kind, top=True) == from_kio(
        theirs, api_key, kind, top=True)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=st.integers(*int_bounds(4)),
       client_id=st.none() | TEXT)
def test_whole_frames_read_in_kio(api_key: int, version: int, data: st.DataObject,
                                  correlation_id: int, client_id: str | None) -> None:
    request = data.draw(values(our_schema(api_key, version, "request"), api_key, "request",
                               top=True))
    frame = raft_frames.encode_request(api_key, version, correlation_id, client_id, request)
    entity_type = kio_message(api_key, version, "request")
    header, size = kio_serial.entity_reader(entity_type.__header_schema__)(memoryview(frame), 4)
    assert (header.request_api_key, header.request_api_version, header.correlation_id,
            header.client_id) == (api_key, version, correlation_id, client_id)
    assert kio_decode(entity_type, frame[4 + size:]) == to_kio(entity_type, request, api_key,
                                                               "request", top=True)
    response = data.draw(values(our_schema(api_key, version, "response"), api_key, "response",
                                top=True))
    frame = raft_frames.encode_response(api_key, version, correlation_id, response)
    entity_type = kio_message(api_key, version, "response")
    header, size = kio_serial.entity_reader(entity_type.__header_schema__)(memoryview(frame), 4)
    assert header.correlation_id == correlation_id
    assert kio_decode(entity_type, frame[4 + size:]) == to_kio(entity_type, response, api_key,
                                                               "response")
