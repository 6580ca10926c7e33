"""Declarative schemas and the one encoder/decoder.

A message is declared once, Kafka-JSON style: each :class:`Field` says in which versions it
exists (``versions="2+"``) and in which it may be null (``nullable="1+"``). For a given
version, :func:`materialize` turns the declaration into a concrete :class:`Struct`: fields
outside the version are dropped, and in flexible versions strings, bytes and arrays become
their compact forms and every struct gets a trailing tag buffer (key ``tagged_fields``,
value ``dict[int, bytes]`` of raw tagged fields) -- the rules of Kafka's message generator.

Values are plain data: a struct is a ``dict`` keyed by field name, an array a ``list``
(tuples accepted on encode), null is ``None``. ``wire.encode`` writes missing fields that
declare a default (and an empty tag buffer); it ignores keys the version does not have, so
one dict built with every field can be written at any version. ``wire.decode`` raises only
``DecodeError``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

TAGGED_FIELDS = "tagged_fields"
MAX_STRING_BYTES = 0x7FFF


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, slots=True)
class Int:
    width: int  # bytes: 1, 2, 4, 8 (signed, big-endian)


@dataclass(frozen=True, slots=True)
class UInt16:
    """Kafka's ``uint16`` (a listener's port in BrokerRegistration)."""


@dataclass(frozen=True, slots=True)
class Bool:
    pass


@dataclass(frozen=True, slots=True)
class UuidType:
    """Kafka's ``uuid``: 16 raw bytes (topic ids, incarnation ids), a ``bytes`` value."""


@dataclass(frozen=True, slots=True)
class Str:
    nullable: bool = False
    compact: bool = False


@dataclass(frozen=True, slots=True)
class Bytes:
    nullable: bool = False
    compact: bool = False


@dataclass(frozen=True, slots=True)
class Array:
    item: Type
    nullable: bool = False
    compact: bool = False


@dataclass(frozen=True, slots=True)
class Struct:
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class TaggedFields:
    """A TAG_BUFFER: uvarint count, then (uvarint tag, uvarint size, bytes) by rising tag."""


Type = Int | UInt16 | UuidType | Bool | Str | Bytes | Array | Struct | TaggedFields

INT8, INT16, INT32, INT64 = Int(1), Int(2), Int(4), Int(8)
BOOL = Bool()
UINT16 = UInt16()
UUID = UuidType()
STRING = Str()
NULLABLE_STRING = Str(nullable=True)
COMPACT_STRING = Str(compact=True)
COMPACT_NULLABLE_STRING = Str(nullable=True, compact=True)
TAG_BUFFER = TaggedFields()


def array(item: Type) -> Array:
    return Array(item)


def struct(*fields: Field) -> Struct:
    return Struct(tuple(fields))


@dataclass(frozen=True, slots=True)
class VersionRange:
    low: int
    high: int | None  # None: no upper bound ("N+")

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int) or self.low < 0:
            return False
        return version >= self.low and (self.high is None or version <= self.high)


@functools.cache
def versions(spec: str) -> VersionRange:
    """Kafka's version specs: ``"none"``, ``"3"``, ``"1-3"``, ``"2+"``."""
    if spec == "none":
        return VersionRange(-1, -1)
    if spec.endswith("+"):
        return VersionRange(int(spec[:-1]), None)
    low, _, high = spec.partition("-")
    return VersionRange(int(low), int(high or low))


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: Type
    versions: str = "0+"
    nullable: str = "none"
    default: Any = NO_DEFAULT


@dataclass(frozen=True, slots=True)
class Message:
    """One request or response of one API, declared once for all its versions."""

    name: str
    api_key: int
    valid: str  # the versions this codec declares, e.g. "0-8"
    flexible: str  # Kafka's flexibleVersions, e.g. "9+" (kept even when above ``valid``)
    fields: tuple[Field, ...]

    def is_flexible(self, version: int) -> bool:
        return version in versions(self.flexible)

    def schema(self, version: int) -> Struct:
        key = (id(self), version)
        hit = _SCHEMAS.get(key)
        if hit is not None and hit[0] is self:  # no hashing of the field tree per request
            return hit[1]
        if version not in versions(self.valid):
            raise KeyError(f"{self.name} v{version} is not declared (valid {self.valid})")
        struct = materialize(self.fields, version, self.is_flexible(version))
        if len(_SCHEMAS) >= 4096:  # bounded: messages built on the fly (tests) come and go
            _SCHEMAS.clear()
        _SCHEMAS[key] = (self, struct)  # keeps ``self`` alive: its id is not reused
        return struct


_SCHEMAS: dict[tuple[int, int], tuple[Message, Struct]] = {}
"""``Message.schema`` by (message identity, version): the messages are module constants."""


@functools.cache
def materialize(fields: tuple[Field, ...], version: int, flexible: bool) -> Struct:
    out = []
    for f in fields:
        if version in versions(f.versions):
            nullable = version in versions(f.nullable)
            out.append(
                Field(f.name, _resolve(f.type, version, flexible, nullable), default=f.default)
            )
    if flexible:
        out.append(Field(TAGGED_FIELDS, TAG_BUFFER))
    return Struct(tuple(out))


def _resolve(t: Type, version: int, flexible: bool, nullable: bool) -> Type:
    match t:
        case Str():
            return Str(nullable=nullable, compact=flexible)
        case Bytes():
            return Bytes(nullable=nullable, compact=flexible)
        case Array(item=item):
            return Array(_resolve(item, version, flexible, False), nullable, flexible)
        case Struct(fields=fields):
            return materialize(fields, version, flexible)
        case _:
            if nullable:
                raise TypeError(f"{t} cannot be nullable")
            return t
