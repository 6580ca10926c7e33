"""Our wire codec against kafka-python 3.x, the client the integration tests drive.

kafka-python speaks ApiVersions and Metadata (``kafka.protocol.metadata``, generated at import
from Kafka's JSON schemas) and none of the controller APIs. For every version of those two
that we support, requests and responses, with their headers and frames: the bytes our codec
writes must be the bytes kafka-python writes for the same value, each side must read the
other's bytes back as that value, and unknown tagged fields we write must reach kafka-python
intact. Values cross over through a field-by-field mapping (:func:`to_kp`, :func:`from_kp`)
that fails on any field one side has and the other lacks at that version.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol import api_header as kp_header
from kafka.protocol import metadata as kp_metadata
from kafka.protocol.old import api_versions as kp_old_api_versions
from kafka.protocol.old import metadata as kp_old_metadata
from kafka.protocol.old import types as kp_old_types
from netcodec_strategies import TEXT, values_with

from adapters.network.codec import registry
from adapters.network.codec.apis import api_versions
from adapters.network.codec.dispatch import (
    Request,
    decode_response,
    encode_request,
    encode_response,
    fallback_frame,
    parse_request,
)
from adapters.network.codec.headers import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    RequestHeader,
    request_header_version,
)
from adapters.network.codec.primitives import UINT32_MAX, int_bounds
from adapters.network.codec.schema import TAGGED_FIELDS, Array, Field, Struct, Type
from adapters.network.codec.wire import decode, encode
from adapters.network.metadata_answers import MetadataAnswers

MESSAGES: dict[int, tuple[Any, Any]] = {
    registry.ApiKey.API_VERSIONS: (kp_metadata.ApiVersionsRequest, kp_metadata.ApiVersionsResponse),
    registry.ApiKey.METADATA: (kp_metadata.MetadataRequest, kp_metadata.MetadataResponse),
}
CASES = [
    (key, version)
    for key, (lo, hi) in registry.SUPPORTED.items()
    if key in MESSAGES
    for version in range(lo, hi + 1)
]
IDS = [f"{registry.ApiKey(k).name}-v{v}" for k, v in CASES]
KINDS = ["request", "response"]
INT32 = st.integers(*int_bounds(4))
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIRST_UNDECLARED_TAG = 4
"""ApiVersionsResponse declares tags 0-3; kafka-python parses those, and keeps any other tag
as raw bytes in ``unknown_tags``. Generated tagged fields start here."""

RENAMES: dict[str, str] = {"authorized_operations": "_authorized_operations"}
"""kafka-python field -> ours where the names differ: it renames both
``*_authorized_operations`` fields to ``authorized_operations`` (a set of bit indexes)."""


def kp_class(api_key: int, kind: str) -> Any:
    request, response = MESSAGES[api_key]
    return request if kind == "request" else response


def our_schema(api_key: int, version: int, kind: str) -> Struct:
    if kind == "request":
        return registry.request_schema(api_key, version)
    return registry.response_schema(api_key, version)


def kp_fields(struct: Any, version: int) -> list[Any]:
    """kafka-python's untagged fields of ``struct`` at ``version``, in wire order."""
    return [f for f in struct._fields if f.for_version_q(version) and not f.tagged_field_q(version)]


def our_name(kp_name: str, ours: Iterable[str]) -> str:
    """Our name of kafka-python's field ``kp_name`` in a struct whose field names are ``ours``."""
    if kp_name in RENAMES:
        (match,) = [k for k in ours if k.endswith(RENAMES[kp_name])]
        return match
    return kp_name


def to_bits(value: int) -> set[int] | None:
    """An INT32 authorized-operations value as kafka-python holds it (INT32_MIN: None)."""
    bits = {i for i in range(32) if (value & 0xFFFFFFFF) >> i & 1}
    return None if bits == {31} else bits


def from_bits(bits: set[int] | None) -> int:
    unsigned = sum(1 << i for i in ({31} if bits is None else bits))
    return unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned


def to_kp_kwargs(struct: Any, version: int, value: dict[str, Any]) -> dict[str, Any]:
    """Our struct value as keyword arguments of kafka-python's class for ``struct``."""
    kwargs = {}
    used = set()
    for f in kp_fields(struct, version):
        ours = our_name(f.name, value)
        used.add(ours)
        v = value[ours]
        if f.is_struct_array():
            item = f.array_of
            v = None if v is None else [to_kp_object(item, version, x) for x in v]
        elif f.is_struct():
            v = None if v is None else to_kp_object(f, version, v)
        elif f.name == "authorized_operations":
            v = to_bits(v)
        kwargs[f.name] = v
    assert set(value) - {TAGGED_FIELDS} == used, f"{struct.name}: fields differ"
    return kwargs


def to_kp_object(struct: Any, version: int, value: dict[str, Any]) -> Any:
    return struct.data_class(version=version, **to_kp_kwargs(struct, version, value))


def to_kp(api_key: int, version: int, kind: str, body: dict[str, Any]) -> Any:
    cls = kp_class(api_key, kind)
    return cls[version](**to_kp_kwargs(cls._struct, version, body))


def from_kp(struct: Any, version: int, schema: Struct, obj: Any) -> dict[str, Any]:
    """A decoded kafka-python object as our value of ``schema``, unknown tags as raw tagged
    fields (``schema`` supplies only our names and tells where a tag buffer is)."""
    ours = {f.name: f.type for f in schema.fields}
    out: dict[str, Any] = {}
    for f in kp_fields(struct, version):
        name = our_name(f.name, ours)
        v = getattr(obj, f.name)
        if f.is_struct_array():
            item = ours[name]
            assert isinstance(item, Array) and isinstance(item.item, Struct)
            v = None if v is None else [from_kp(f.array_of, version, item.item, x) for x in v]
        elif f.name == "authorized_operations":
            v = from_bits(v)
        elif isinstance(v, tuple):
            v = list(v)
        out[name] = v
    if TAGGED_FIELDS in ours:
        out[TAGGED_FIELDS] = {int(k[1:]): bytes(v) for k, v in (obj.unknown_tags or {}).items()}
    return out


def kp_decode(api_key: int, version: int, kind: str, data: bytes) -> Any:
    cls = kp_class(api_key, kind)
    return cls.decode(data, version=version)


def strip_tags(value: Any) -> Any:
    """``value`` with every tag buffer emptied: kafka-python writes only tags it declares."""
    if isinstance(value, dict):
        return {k: ({} if k == TAGGED_FIELDS else strip_tags(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_tags(v) for v in value]
    return value


def crossable(t: Type) -> st.SearchStrategy[Any]:
    """Values of ``t`` kafka-python can hold: tagged fields only of tags it does not declare."""
    return values_with(t, _crossable_field)


def _crossable_field(f: Field) -> st.SearchStrategy[Any] | None:
    if f.name == TAGGED_FIELDS:
        return st.dictionaries(
            st.integers(FIRST_UNDECLARED_TAG, UINT32_MAX), st.binary(max_size=6), max_size=2
        )
    return None


def readable_by_kp(api_key: int, version: int, kind: str, body: dict[str, Any]) -> bool:
    """Whether kafka-python can read ``body``: both its implementations read any ApiVersions
    response carrying an error as a v0 body (reference section 7, the fallback). So the
    INVALID_REQUEST answer that Kafka, and we, send in the requested version (v3, for
    malformed client software) is beyond it; kafka-python never provokes one."""
    return not (api_key == 18 and kind == "response" and version > 0 and body["error_code"])


# -- bodies, both ways --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data())
def test_bodies_match_kafka_python_both_ways(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    body = data.draw(crossable(schema))
    assume_readable = readable_by_kp(api_key, version, kind, body)
    ours = encode(schema, body)
    bare = strip_tags(body)
    theirs = to_kp(api_key, version, kind, bare)
    wire = bytes(theirs.encode(version=version))
    # kafka-python -> ours: same bytes, and our reading of them is the value
    assert wire == encode(schema, bare)
    assert decode(schema, wire) == bare
    # ours -> kafka-python: it reads our value back, unknown tagged fields included
    if assume_readable:
        read = kp_decode(api_key, version, kind, ours)
        assert from_kp(kp_class(api_key, kind)._struct, version, schema, read) == body


# -- headers and whole frames -------------------------------------------------------------------


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | TEXT)
def test_request_frames_match_kafka_python_both_ways(
    api_key: int, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = strip_tags(data.draw(crossable(registry.request_schema(api_key, version))))
    header = RequestHeader(api_key, version, correlation_id, client_id)
    theirs = to_kp(api_key, version, "request", body)
    theirs.with_header(correlation_id=correlation_id, client_id=client_id)
    frame = encode_request(header, body)
    assert bytes(theirs.encode(header=True, framed=True)) == frame
    parsed = parse_request(frame[4:])
    if isinstance(parsed, Request):
        assert parsed == Request(header, body)
    else:  # ApiVersions v3 with client software Kafka's pattern rejects
        assert api_key == 18 and not api_versions.is_valid_request(body, version)
    read = kp_class(api_key, "request").decode(frame, version=version, header=True, framed=True)
    assert (read.header.correlation_id, read.header.client_id) == (correlation_id, client_id)
    assert read.header.request_api_key == api_key
    assert read.header.request_api_version == version
    assert read == theirs


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=INT32)
def test_response_frames_match_kafka_python_both_ways(
    api_key: int, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = strip_tags(data.draw(crossable(registry.response_schema(api_key, version))))
    theirs = to_kp(api_key, version, "response", body)
    theirs.with_header(correlation_id=correlation_id)
    frame = encode_response(api_key, version, correlation_id, body)
    assert bytes(theirs.encode(header=True, framed=True)) == frame
    if readable_by_kp(api_key, version, "response", body):
        assert decode_response(api_key, version, frame[4:]) == (correlation_id, body)
        read = kp_class(api_key, "response").decode(
            frame, version=version, header=True, framed=True
        )
        assert read.header.correlation_id == correlation_id
        assert read == theirs


@pytest.mark.parametrize("version", sorted(set(REQUEST_HEADERS) - {0}))
@EXAMPLES
@given(data=st.data())
def test_request_headers_match_kafka_python(version: int, data: st.DataObject) -> None:
    """Request header v1 and v2 (kafka-python has no v0: ControlledShutdown v0 only);
    in v2 client_id keeps its INT16 length, and unknown header tags reach kafka-python."""
    schema = REQUEST_HEADERS[version]
    header = data.draw(crossable(schema))
    flexible = version == 2
    wire = encode(schema, header)
    bare = strip_tags(header)
    theirs = kp_header.RequestHeader(**{k: v for k, v in bare.items() if k != TAGGED_FIELDS})
    assert bytes(theirs.encode(flexible=flexible)) == encode(schema, bare)
    read = kp_header.RequestHeader.decode(_stream(wire), flexible=flexible)
    assert from_kp(kp_header.RequestHeader._struct, version, schema, read) == header


@pytest.mark.parametrize("version", sorted(RESPONSE_HEADERS))
@EXAMPLES
@given(data=st.data())
def test_response_headers_match_kafka_python(version: int, data: st.DataObject) -> None:
    schema = RESPONSE_HEADERS[version]
    header = data.draw(crossable(schema))
    flexible = version == 1
    wire = encode(schema, header)
    theirs = kp_header.ResponseHeader(correlation_id=header["correlation_id"])
    assert bytes(theirs.encode(flexible=flexible)) == encode(schema, strip_tags(header))
    read = kp_header.ResponseHeader.decode(_stream(wire), flexible=flexible)
    assert from_kp(kp_header.ResponseHeader._struct, version, schema, read) == header


def _stream(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)


# -- ApiVersions: the fallback and the header exception -----------------------------------------


@pytest.mark.parametrize("requested", range(kp_metadata.ApiVersionsRequest.max_version + 1))
def test_kafka_python_api_versions_handshake_at_every_version_it_knows(requested: int) -> None:
    """kafka-python's ApiVersions request at each version it knows (its first is its highest,
    above ours) parses in our codec; a version we lack gets the v0 body with
    UNSUPPORTED_VERSION, which kafka-python reads at the version it asked for and from which
    it learns our ApiVersions range."""
    request = kp_metadata.ApiVersionsRequest[requested](
        client_software_name="kafka-python", client_software_version="3.0.12"
    )
    request.with_header(correlation_id=11, client_id="kp")
    parsed = parse_request(bytes(request.encode(header=True, framed=True))[4:])
    lo, hi = registry.SUPPORTED[18]
    if requested <= hi:
        assert isinstance(parsed, Request)
        assert parsed.header == RequestHeader(18, requested, 11, "kp")
        if requested >= 3:
            assert parsed.body["client_software_name"] == "kafka-python"
        return
    assert not isinstance(parsed, Request) and parsed.response_version == 0
    frame = parsed.response_frame()
    assert frame == fallback_frame(11)
    read = kp_metadata.ApiVersionsResponse.decode(
        frame, version=requested, header=True, framed=True
    )
    assert read.header.correlation_id == 11
    assert read.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in read.api_keys] == [
        (18, *registry.SUPPORTED[18])
    ]


def test_request_header_versions_agree_with_kafka_python() -> None:
    """Flexible requests carry header v2; ApiVersions responses keep header v0 even at v3."""
    for api_key, version in CASES:
        cls = kp_class(api_key, "request")
        flexible = registry.is_flexible(api_key, version)
        assert cls.flexible_version_q(version) == flexible
        assert request_header_version(api_key, version, flexible) == (2 if flexible else 1)
    body = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0, TAGGED_FIELDS: {}}
    theirs = to_kp(18, 3, "response", body)
    theirs.with_header(correlation_id=5)
    assert bytes(theirs.encode(header=True, framed=True)) == encode_response(18, 3, 5, body)


# -- the hand-written structs of kafka.protocol.old -------------------------------------------
#
# kafka-python 3.x keeps its earlier protocol classes, written by hand from Kafka's protocol
# guide rather than generated, in ``kafka.protocol.old``: a second implementation, which also
# encodes raw tagged fields and checks on decode that tags rise.

OLD: dict[int, dict[str, Any]] = {
    registry.ApiKey.API_VERSIONS: {
        "request": kp_old_api_versions.ApiVersionsRequest,
        "response": kp_old_api_versions.ApiVersionsResponse,
    },
    registry.ApiKey.METADATA: {
        "request": kp_old_metadata.MetadataRequest,
        "response": kp_old_metadata.MetadataResponse,
    },
}


def _single_field(t: Type) -> str | None:
    """The one field of a struct with one field and no tag buffer (kafka.protocol.old writes
    such arrays, e.g. Metadata's requested topics, as arrays of the bare value)."""
    if isinstance(t, Struct) and len(t.fields) == 1 and t.fields[0].name != TAGGED_FIELDS:
        return t.fields[0].name
    return None


def to_old(old: Any, schema: Struct, value: dict[str, Any]) -> tuple[Any, ...]:
    """Our struct value as the tuple ``old`` (a ``kafka.protocol.old`` Schema) encodes."""
    ours = {f.name: f.type for f in schema.fields}
    out = []
    used = set()
    for name, t in zip(old.names, old.fields, strict=True):
        if t is kp_old_types.TaggedFields:
            used.add(TAGGED_FIELDS)
            out.append(dict(sorted(value[TAGGED_FIELDS].items())))
            continue
        mine = our_name(name, ours)
        used.add(mine)
        v = value[mine]
        if isinstance(t, kp_old_types.Array) and v is not None:
            item = ours[mine]
            assert isinstance(item, Array)
            if isinstance(t.array_of, kp_old_types.Schema):
                assert isinstance(item.item, Struct)
                v = [to_old(t.array_of, item.item, x) for x in v]
            elif (only := _single_field(item.item)) is not None:
                v = [x[only] for x in v]
        elif t is kp_old_types.BitField:
            v = to_bits(v)
        out.append(v)
    assert used == set(value), f"fields differ: {sorted(used ^ set(value))}"
    return tuple(out)


def from_old(old: Any, schema: Struct, item: Any) -> dict[str, Any]:
    """A value decoded by ``old`` (a tuple, or a top-level Struct) as our struct value."""
    ours = {f.name: f.type for f in schema.fields}
    seq = [getattr(item, n) for n in old.names] if hasattr(item, "SCHEMA") else list(item)
    if len(seq) == len(old.fields) - 1 and old.has_tagged_fields():
        seq.append({})  # kafka.protocol.old drops an empty tag buffer from decoded tuples
    out: dict[str, Any] = {}
    for name, t, v in zip(old.names, old.fields, seq, strict=True):
        if t is kp_old_types.TaggedFields:
            out[TAGGED_FIELDS] = dict(v)
            continue
        mine = our_name(name, ours)
        if isinstance(t, kp_old_types.Array) and v is not None:
            array = ours[mine]
            assert isinstance(array, Array)
            if isinstance(t.array_of, kp_old_types.Schema):
                assert isinstance(array.item, Struct)
                v = [from_old(t.array_of, array.item, x) for x in v]
            elif (only := _single_field(array.item)) is not None:
                v = [{only: x} for x in v]
        elif t is kp_old_types.BitField:
            v = from_bits(v)
        out[mine] = v
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data())
def test_bodies_match_kafka_python_old_structs_both_ways(
    api_key: int, version: int, kind: str, data: st.DataObject
) -> None:
    schema = our_schema(api_key, version, kind)
    old_class = OLD[api_key][kind][version]
    body = data.draw(crossable(schema))
    ours = encode(schema, body)
    wire = old_class(*to_old(old_class.SCHEMA, schema, body)).encode()
    assert wire == ours
    assert decode(schema, wire) == body
    if readable_by_kp(api_key, version, kind, body):
        assert from_old(old_class.SCHEMA, schema, old_class.decode(ours)) == body


@settings(max_examples=10, deadline=None)
@given(
    tags=st.dictionaries(
        st.integers(FIRST_UNDECLARED_TAG, UINT32_MAX),
        st.binary(min_size=100, max_size=400),
        min_size=1,
        max_size=3,
    ),
    name=st.text(min_size=100, max_size=300),
)
def test_large_tagged_fields_match_kafka_python_old_structs(
    tags: dict[int, bytes], name: str
) -> None:
    """Tag numbers and sizes past one varint byte, in rising order, both ways."""
    schema = registry.request_schema(18, 3)
    old_class = OLD[18]["request"][3]
    body = {"client_software_name": name, "client_software_version": "1", TAGGED_FIELDS: tags}
    wire = encode(schema, body)
    assert old_class(*to_old(old_class.SCHEMA, schema, body)).encode() == wire
    assert from_old(old_class.SCHEMA, schema, old_class.decode(wire)) == body
    read = kp_metadata.ApiVersionsRequest.decode(wire, version=3)
    assert from_kp(kp_metadata.ApiVersionsRequest._struct, 3, schema, read) == body


# -- Metadata answers as the broker sends them: spliced from cached pieces -----------------------


def _unique_topics(body: dict[str, Any]) -> dict[str, Any]:
    seen: set[str] = set()
    topics = []
    for t in body["topics"]:
        if t["name"] not in seen:
            seen.add(t["name"])
            topics.append(t)
    return {**body, "topics": topics}


@pytest.mark.parametrize("version", range(registry.SUPPORTED[3][0], registry.SUPPORTED[3][1] + 1))
@EXAMPLES
@given(data=st.data())
def test_spliced_metadata_answers_read_in_kafka_python(version: int, data: st.DataObject) -> None:
    """``MetadataAnswers`` joins cached bytes (prefix, INT32 topic count, one encoding per
    topic, suffix) instead of encoding a whole answer: the bytes must be those of the
    plain encoding, and both kafka-python implementations must read them."""
    schema = registry.response_schema(3, version)
    full = _unique_topics(strip_tags(data.draw(crossable(schema))))
    asked = data.draw(
        st.none()
        | st.lists(st.sampled_from([t["name"] for t in full["topics"]] + ["absent"]), max_size=4)
    )
    core = SimpleNamespace(state="running", epoch=1, metadata_cache=None)
    core.topic_metadata = lambda _names: ()
    answers = MetadataAnswers(lambda: core, threading.Lock(), lambda _v, _t: dict(full))
    body = answers.body(version, asked)
    if asked is None:
        expected = full
    else:
        by_name = {t["name"]: t for t in full["topics"]}
        unknown = {"error_code": 3, "name": None, "is_internal": False, "partitions": []}
        expected = {
            **full,
            "topics": [
                by_name.get(n) or decode(*_topic(version, {**unknown, "name": n}))
                for n in dict.fromkeys(asked)
            ],
        }
    assert body == encode(schema, expected)
    read = kp_metadata.MetadataResponse.decode(body, version=version)
    assert from_kp(kp_metadata.MetadataResponse._struct, version, schema, read) == expected
    old_class = OLD[3]["response"][version]
    assert from_old(old_class.SCHEMA, schema, old_class.decode(body)) == expected


def _topic(version: int, value: dict[str, Any]) -> tuple[Type, bytes]:
    """(the topic struct of Metadata v``version``, ``value`` encoded with its defaults)."""
    (topics,) = [f for f in registry.response_schema(3, version).fields if f.name == "topics"]
    assert isinstance(topics.type, Array)
    return topics.type.item, encode(topics.type.item, value)
