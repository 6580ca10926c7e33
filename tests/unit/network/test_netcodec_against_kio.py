"""Our wire codec against kio, an independent codec generated from Kafka's own JSON schemas.

For every API and version in ``registry.SUPPORTED``, requests and responses, bodies and
headers: a value encoded by our codec must be the very bytes kio writes for the same value,
and must read back in kio as that value; a value generated and encoded by kio must read in
our codec as that value and re-encode to kio's bytes. Values cross over through a small
field-by-field mapping (:func:`to_kio`, :func:`from_kio`) that fails on any field one side
has and the other lacks at that version.
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
from kio.schema.request_header.v0.header import RequestHeader as KioRequestHeaderV0
from kio.schema.request_header.v1.header import RequestHeader as KioRequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as KioRequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as KioResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as KioResponseHeaderV1
from kio.serial import _introspect as kio_introspect
from netcodec_strategies import TEXT, values_with

from adapters.network.codec import registry
from adapters.network.codec.dispatch import encode_request, encode_response
from adapters.network.codec.headers import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    RequestHeader,
    request_header_version,
    response_header_version,
)
from adapters.network.codec.primitives import int_bounds
from adapters.network.codec.schema import TAGGED_FIELDS, Field, Struct, Type
from adapters.network.codec.wire import decode, encode

CASES = [
    (key, version) for key, (lo, hi) in registry.SUPPORTED.items() for version in range(lo, hi + 1)
]
IDS = [f"{registry.ApiKey(k).name}-v{v}" for k, v in CASES]
KIO_REQUEST_HEADERS = {0: KioRequestHeaderV0, 1: KioRequestHeaderV1, 2: KioRequestHeaderV2}
KIO_RESPONSE_HEADERS = {0: KioResponseHeaderV0, 1: KioResponseHeaderV1}
KNOWN_ERROR_CODES = sorted(int(e) for e in kio_errors.ErrorCode)
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FROM_KIO = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""For values kio generates (``st.from_type``): whole nested messages, slower to draw."""

RENAMES: dict[tuple[str, str], str] = {
    ("LeaderAndIsrPartitionState", "partition_epoch"): "zk_version",
    ("UpdateMetadataBroker", "id_"): "id",
    ("ApiVersionsResponse", "throttle_time"): "throttle_time_ms",
    ("MetadataResponse", "throttle_time"): "throttle_time_ms",
}
"""(kio entity, kio field) -> our field, where the names differ (kio renames ``id`` and
``throttle_time_ms``; Kafka renamed ZkVersion to PartitionEpoch in later schemas)."""


def our_name(entity: type, kio_field: dataclasses.Field[Any]) -> str:
    return RENAMES.get((entity.__name__, kio_field.name), kio_field.name)


def untagged(entity: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(entity) if kio_introspect.get_field_tag(f) is None]


def tagged(entity: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(entity) if kio_introspect.get_field_tag(f) is not None]


def to_kio(entity: type, value: dict[str, Any]) -> Any:
    """Our struct value as an instance of the kio entity; every field maps one to one."""
    mapped = {our_name(entity, f): f for f in untagged(entity)}
    assert set(value) - {TAGGED_FIELDS} == set(mapped), f"{entity.__name__}: fields differ"
    assert (TAGGED_FIELDS in value) == entity.__flexible__, f"{entity.__name__}: flexibility"
    assert not value.get(TAGGED_FIELDS), "kio writes only the tagged fields it declares"
    return entity(**{f.name: _to_kio_value(f, value[ours]) for ours, f in mapped.items()})


def _to_kio_value(f: dataclasses.Field[Any], v: Any) -> Any:
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField(type_=t):
            return None if v is None else to_kio(t, v)
        case kio_introspect.EntityTupleField(type_=t):
            return None if v is None else tuple(to_kio(t, x) for x in v)
        case kio_introspect.PrimitiveTupleField():
            return None if v is None else tuple(v)
    kafka_type = kio_introspect.get_schema_field_type(f)
    if kafka_type == "error_code":
        return kio_errors.ErrorCode(v)
    if kafka_type == "timedelta_i32":
        return datetime.timedelta(milliseconds=v)
    return v


def from_kio(entity: Any) -> dict[str, Any]:
    """A kio entity as our struct value (tagged fields at their defaults: empty buffer)."""
    t = type(entity)
    out = {our_name(t, f): _from_kio_value(f, getattr(entity, f.name)) for f in untagged(t)}
    if t.__flexible__:
        out[TAGGED_FIELDS] = {}
    return out


def _from_kio_value(f: dataclasses.Field[Any], v: Any) -> Any:
    if v is None:
        return None
    match kio_introspect.classify_field(f):
        case kio_introspect.EntityField():
            return from_kio(v)
        case kio_introspect.EntityTupleField():
            return [from_kio(x) for x in v]
        case kio_introspect.PrimitiveTupleField():
            return list(v)
    if isinstance(v, datetime.timedelta):
        return round(v.total_seconds() * 1000)
    if isinstance(v, kio_errors.ErrorCode):
        return int(v)
    return v


def kio_encode(entity_type: type, value: Any) -> bytes:
    buf = io.BytesIO()
    kio_serial.entity_writer(entity_type)(buf, value)
    return buf.getvalue()


def kio_decode(entity_type: type, data: bytes) -> Any:
    value, size = kio_serial.entity_reader(entity_type)(memoryview(data), 0)
    assert size == len(data), f"kio read {size} of {len(data)} bytes"
    return value


def crossable(t: Type) -> st.SearchStrategy[Any]:
    """Values of ``t`` that kio can hold: error codes it knows, no unknown tagged fields."""
    return values_with(t, _crossable_field)


def _crossable_field(f: Field) -> st.SearchStrategy[Any] | None:
    if f.name == TAGGED_FIELDS:
        return st.just({})
    if f.name == "error_code":
        return st.sampled_from(KNOWN_ERROR_CODES)
    return None


def kio_message(api_key: int, version: int, kind: str) -> type:
    if kind == "request":
        return kio_index.load_request_schema(api_key, version)
    return kio_index.load_response_schema(api_key, version)


def our_schema(api_key: int, version: int, kind: str) -> Struct:
    if kind == "request":
        return registry.request_schema(api_key, version)
    return registry.response_schema(api_key, version)


KINDS = ["request", "response"]


# -- the messages' shape: flexibility and header versions ------------------------------------


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
def test_flexibility_and_header_versions_match_kio(api_key: int, version: int) -> None:
    request, response = (
        kio_message(api_key, version, "request"),
        kio_message(api_key, version, "response"),
    )
    flexible = registry.is_flexible(api_key, version)
    assert request.__flexible__ == flexible
    assert response.__flexible__ == registry.APIS[api_key].response.is_flexible(version)
    assert request.__api_key__ == api_key and request.__version__ == version
    header_version = request_header_version(api_key, version, flexible)
    assert request.__header_schema__ is KIO_REQUEST_HEADERS[header_version]
    assert (
        response.__header_schema__
        is KIO_RESPONSE_HEADERS[response_header_version(api_key, flexible)]
    )


# -- bodies, ours -> kio ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data())
def test_our_bytes_are_kio_bytes_and_read_back_in_kio(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    entity_type = kio_message(api_key, version, kind)
    body = data.draw(crossable(schema))
    ours = encode(schema, body)
    theirs = to_kio(entity_type, body)
    assert ours == kio_encode(entity_type, theirs)
    assert kio_decode(entity_type, ours) == theirs


# -- bodies, kio -> ours ----------------------------------------------------------------------


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
    expected = from_kio(theirs)
    tags = {
        kio_introspect.get_field_tag(f)
        for f in tagged(entity_type)
        if getattr(theirs, f.name) != f.default
    }
    assert set(ours.get(TAGGED_FIELDS, {})) == tags
    if TAGGED_FIELDS in ours:
        expected[TAGGED_FIELDS] = ours[TAGGED_FIELDS]  # raw: the tag set is checked above
    assert ours == expected


# -- headers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(
    correlation_id=st.integers(*int_bounds(4)),
    client_id=st.none() | TEXT,
    data=st.data(),
)
def test_request_header_and_body_frame_read_in_kio(
    api_key: int, version: int, correlation_id: int, client_id: str | None, data: st.DataObject
) -> None:
    header_version = request_header_version(
        api_key, version, registry.is_flexible(api_key, version)
    )
    if header_version == 0:
        client_id = None
    body = data.draw(crossable(registry.request_schema(api_key, version)))
    frame = encode_request(RequestHeader(api_key, version, correlation_id, client_id), body)
    entity_type = kio_message(api_key, version, "request")
    header_type = entity_type.__header_schema__
    header, size = kio_serial.entity_reader(header_type)(memoryview(frame), 4)
    expected = {
        "request_api_key": api_key,
        "request_api_version": version,
        "correlation_id": correlation_id,
    }
    if header_version >= 1:
        expected["client_id"] = client_id
    assert {f.name: getattr(header, f.name) for f in dataclasses.fields(header)} == expected
    assert kio_encode(header_type, header) == frame[4 : 4 + size]
    assert kio_decode(entity_type, frame[4 + size :]) == to_kio(entity_type, body)


@pytest.mark.parametrize("version", sorted(REQUEST_HEADERS))
@EXAMPLES
@given(data=st.data())
def test_request_headers_match_kio_both_ways(version: int, data: st.DataObject) -> None:
    schema = REQUEST_HEADERS[version]
    kio_type = KIO_REQUEST_HEADERS[version]
    header = data.draw(crossable(schema))
    wire = encode(schema, header)
    assert wire == kio_encode(kio_type, to_kio(kio_type, header))
    assert from_kio(kio_decode(kio_type, wire)) == header
    theirs = data.draw(st.from_type(kio_type))
    assert decode(schema, kio_encode(kio_type, theirs)) == from_kio(theirs)


@pytest.mark.parametrize("version", sorted(RESPONSE_HEADERS))
@EXAMPLES
@given(data=st.data(), correlation_id=st.integers(*int_bounds(4)))
def test_response_headers_match_kio_both_ways(
    version: int, data: st.DataObject, correlation_id: int
) -> None:
    schema = RESPONSE_HEADERS[version]
    kio_type = KIO_RESPONSE_HEADERS[version]
    header = data.draw(crossable(schema))
    wire = encode(schema, header)
    assert wire == kio_encode(kio_type, to_kio(kio_type, header))
    assert from_kio(kio_decode(kio_type, wire)) == header
    theirs = data.draw(st.from_type(kio_type))
    assert decode(schema, kio_encode(kio_type, theirs)) == from_kio(theirs)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=st.integers(*int_bounds(4)))
def test_response_frame_read_in_kio(
    api_key: int, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = data.draw(crossable(registry.response_schema(api_key, version)))
    frame = encode_response(api_key, version, correlation_id, body)
    entity_type = kio_message(api_key, version, "response")
    header, size = kio_serial.entity_reader(entity_type.__header_schema__)(memoryview(frame), 4)
    assert header.correlation_id == correlation_id
    assert kio_decode(entity_type, frame[4 + size :]) == to_kio(entity_type, body)


# -- tagged fields that kio declares ------------------------------------------------------------


@EXAMPLES
@given(data=st.data())
def test_api_versions_v3_tagged_fields_survive_our_codec(data: st.DataObject) -> None:
    """ApiVersionsResponse v3 declares tags 0-3 (features, ZK migration); our codec keeps
    them as raw tagged fields, and must hand kio back exactly what it wrote."""
    entity_type = kio_message(18, 3, "response")
    theirs = data.draw(st.from_type(entity_type))
    ours = decode(registry.response_schema(18, 3), kio_encode(entity_type, theirs))
    assert kio_decode(entity_type, encode(registry.response_schema(18, 3), ours)) == theirs


def test_a_tagged_field_we_write_is_read_by_kio() -> None:
    """Tag 3 of ApiVersionsResponse v3 is ZkMigrationReady (bool), tag 1
    FinalizedFeaturesEpoch (int64): written by us as raw tagged fields, in rising order."""
    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3, TAGGED_FIELDS: {}}],
        "throttle_time_ms": 7,
        TAGGED_FIELDS: {3: b"\x01", 1: (300).to_bytes(8, "big")},
    }
    theirs = kio_decode(
        kio_message(18, 3, "response"), encode(registry.response_schema(18, 3), body)
    )
    assert theirs.zk_migration_ready is True
    assert theirs.finalized_features_epoch == 300
    assert theirs.throttle_time == datetime.timedelta(milliseconds=7)
    assert theirs.supported_features == ()


# -- compact lengths past one varint byte -------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(
    name=st.text(min_size=64, max_size=300),
    version=st.text(min_size=0, max_size=300),
    count=st.integers(120, 300),
)
def test_long_compact_strings_and_arrays_match_kio(name: str, version: str, count: int) -> None:
    """Compact lengths are varints of N+1: past 127 they take two bytes (UTF-8 bytes for
    strings, items for arrays)."""
    request_type = kio_message(18, 3, "request")
    request = {"client_software_name": name, "client_software_version": version, TAGGED_FIELDS: {}}
    wire = encode(registry.request_schema(18, 3), request)
    assert wire == kio_encode(request_type, to_kio(request_type, request))
    assert from_kio(kio_decode(request_type, wire)) == request
    response_type = kio_message(18, 3, "response")
    keys = [
        {"api_key": i, "min_version": 0, "max_version": i % 7, TAGGED_FIELDS: {}}
        for i in range(count)
    ]
    response = {"error_code": 0, "api_keys": keys, "throttle_time_ms": 0, TAGGED_FIELDS: {}}
    wire = encode(registry.response_schema(18, 3), response)
    assert wire == kio_encode(response_type, to_kio(response_type, response))
    assert decode(registry.response_schema(18, 3), wire) == response
