"""The dump-log JSON of a metadata record, as ``kafka-dump-log.sh --cluster-metadata-decoder``
prints it: ``{"type": "TOPIC_RECORD", "version": 0, "data": {...}}``.

What Kafka's generated JSON converters do, and so do we: fields in schema order under their
camelCase names; a field the version lacks is not printed; a tagged field is printed only
when it differs from its default (``PARTITION_CHANGE_RECORD`` prints no ``isr`` when the ISR
did not change); a null prints as ``null``; uuids as 22 characters of URL-safe base64, bytes
as standard base64 with padding (Jackson's ``BinaryNode``); nested structs as objects.

``record_from_json`` is the inverse, and strict: a missing required field, an unknown key, a
value of the wrong JSON type or out of its field's range raises :class:`MalformedRecord`
naming the record type and the field. ``payload_line`` gives the compact text Kafka prints.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from fsm.kraft.records.codec import encode_record
from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.schema import (
    BY_CLASS,
    BY_JSON_TYPE,
    MAX_STRING_BYTES,
    Array,
    Field,
    RecordSchema,
    Scalar,
    Struct,
    lowest_version,
)
from fsm.kraft.records.uuid import uuid_from_base64, uuid_to_base64

_BITS = {"int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
         "uint16": (16, False)}


def _to_json(t: Scalar | Array | Struct, v: Any, version: int = 0) -> Any:
    if v is None:
        return None
    if isinstance(t, Scalar):
        if t.kind == "uuid":
            return uuid_to_base64(v)
        if t.kind == "bytes":
            return base64.b64encode(v).decode("ascii")
        if t.kind == "float64":
            return float(v)
        return v
    if isinstance(t, Array):
        return [_to_json(t.item, item) for item in v]
    return _struct_to_json(t, v, version)


def _struct_to_json(t: Struct, v: Any, version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for x in t.fields:
        if x.min_version > version:
            continue
        value = getattr(v, x.name)
        if x.tag is not None and value == x.default:
            continue
        out[x.json_name] = _to_json(x.type, value)
    return out


def record_to_json(value: Any) -> dict[str, Any]:
    """``{"type", "version", "data"}`` of a record of ``values``, at the version the codec
    writes it; ``ValueError`` naming the field for a value the codec would refuse."""
    schema = BY_CLASS.get(type(value))
    if schema is None:
        raise ValueError(f"not a metadata record: {type(value).__name__}")
    encode_record(value)  # the same checks as the bytes: ValueError naming the field
    version = lowest_version(schema, value)
    return {"type": schema.json_type, "version": version,
            "data": _struct_to_json(schema.struct, value, version)}


def payload_line(value: Any) -> str:
    """The text after ``payload: `` in dump-log's output: compact JSON, Kafka's key order."""
    return json.dumps(record_to_json(value), separators=(",", ":"), ensure_ascii=False)


def _bad(record: str, path: str, what: str) -> MalformedRecord:
    return MalformedRecord(f"{record} field {path or 'data'}: {what}")


def _scalar_from_json(t: Scalar, j: Any, record: str, path: str) -> Any:
    kind = t.kind
    if kind in _BITS:
        bits, signed = _BITS[kind]
        lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed
                  else (0, (1 << bits) - 1))
        if type(j) is not int or not lo <= j <= hi:
            raise _bad(record, path, f"{kind} expected, not {j!r}")
        return j
    if kind == "bool":
        if type(j) is not bool:
            raise _bad(record, path, f"true or false expected, not {j!r}")
        return j
    if kind == "float64":
        if isinstance(j, bool) or not isinstance(j, int | float):
            raise _bad(record, path, f"a number expected, not {j!r}")
        return float(j)
    if not isinstance(j, str):
        raise _bad(record, path, f"a {kind} is a JSON string, not {j!r}")
    if kind == "string":
        try:
            size = len(j.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise _bad(record, path, f"not encodable as UTF-8: {exc}") from None
        if size > MAX_STRING_BYTES:
            raise _bad(record, path, f"string of {size} bytes, over {MAX_STRING_BYTES}")
        return j
    if kind == "uuid":
        try:
            return uuid_from_base64(j)
        except ValueError as exc:
            raise _bad(record, path, str(exc)) from None
    try:  # bytes
        return base64.b64decode(j.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _bad(record, path, f"not standard base64: {j!r}") from None


def _from_json(t: Scalar | Array | Struct, j: Any, record: str, path: str) -> Any:
    if j is None:
        if isinstance(t, Array) and t.null_as_empty:
            return ()
        if isinstance(t, Scalar | Array) and t.nullable:
            return None
        raise _bad(record, path, "null where the field is not nullable")
    if isinstance(t, Scalar):
        return _scalar_from_json(t, j, record, path)
    if isinstance(t, Array):
        if not isinstance(j, list):
            raise _bad(record, path, f"a JSON array expected, not {type(j).__name__}")
        return tuple(_from_json(t.item, item, record, f"{path}[{i}]")
                     for i, item in enumerate(j))
    return _struct_from_json(t, j, 0, record, path)


def _struct_from_json(t: Struct, j: Any, version: int, record: str, path: str) -> Any:
    if not isinstance(j, dict):
        raise _bad(record, path, f"a JSON object expected, not {type(j).__name__}")
    present: list[Field] = [x for x in t.fields if x.min_version <= version]
    known = {x.json_name for x in present}
    unknown = [k for k in j if k not in known]
    if unknown:
        raise _bad(record, path, f"unknown keys {unknown} (version {version} has "
                                 f"{sorted(known)})")
    args = []
    for x in t.fields:
        where = f"{path}.{x.json_name}" if path else x.json_name
        if x.min_version > version or (x.tag is not None and x.json_name not in j):
            args.append(x.default)
        elif x.json_name not in j:
            raise _bad(record, where, "missing")
        else:
            args.append(_from_json(x.type, j[x.json_name], record, where))
    return t.cls(*args)


def record_from_json(obj: Any) -> Any:
    """The record of ``{"type", "version", "data"}``; :class:`MalformedRecord` otherwise.
    Accepts ``QUOTA_RECORD`` for type 14 beside Kafka's ``CLIENT_QUOTA_RECORD``."""
    if not isinstance(obj, dict):
        raise MalformedRecord(f"a record is a JSON object, not {type(obj).__name__}")
    if set(obj) != {"type", "version", "data"}:
        raise MalformedRecord(f"a record has the keys type, version, data; not {sorted(obj)}")
    name = obj["type"]
    schema: RecordSchema | None = BY_JSON_TYPE.get(name) if isinstance(name, str) else None
    if schema is None:
        raise MalformedRecord(f"unknown record type {name!r}")
    version = obj["version"]
    if type(version) is not int or not 0 <= version <= schema.max_version:
        raise MalformedRecord(f"{schema.json_type}: unsupported version {version!r} "
                              f"(0-{schema.max_version})")
    return _struct_from_json(schema.struct, obj["data"], version, schema.json_type, "")


__all__ = ["payload_line", "record_from_json", "record_to_json"]
