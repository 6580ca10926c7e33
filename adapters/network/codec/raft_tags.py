"""Named tagged fields (KIP-482) for the quorum APIs, on top of the codec's raw tag buffers.

The schema codec keeps a struct's tagged fields as ``tagged_fields: dict[int, bytes]``. Fetch
and FetchSnapshot carry fields the Raft core needs as tags (the diverging epoch, the current
leader, the snapshot id), so each API module declares them here as :class:`TaggedField` and
:func:`pack` / :func:`unpack` move them between named values and raw bytes. As Kafka's
generated code does, a value equal to the field's default is not written, and an absent tag
reads as the default; tags this codec does not know are kept raw and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.schema import Field, Str, Struct, Type, materialize
from adapters.network.codec.wire import decode, encode


@dataclass(frozen=True, slots=True)
class TaggedField:
    tag: int
    name: str
    type: Type  # declared type; strings become compact (tagged fields exist only if flexible)
    nullable: bool = False
    default: Any = None

    @property
    def wire_type(self) -> Type:
        if isinstance(self.type, Str):
            return Str(nullable=self.nullable, compact=True)
        return self.type


def tagged_struct(*fields: Field) -> Struct:
    """A struct carried in a tag: flexible encoding, with its own (empty) tag buffer."""
    return materialize(tuple(fields), 0, True)


def pack(tags: tuple[TaggedField, ...], value: Mapping[str, Any]) -> dict[int, bytes]:
    """The raw tag buffer of ``value``: its raw ``tagged_fields`` (if any), plus every named
    tagged field present in ``value`` and different from its default."""
    raw = dict(value.get("tagged_fields") or {})
    for tf in tags:
        v = value.get(tf.name, tf.default)
        if _plain(v) == tf.default:
            raw.pop(tf.tag, None)
            continue
        raw[tf.tag] = encode(tf.wire_type, v)
    return raw


def unpack(tags: tuple[TaggedField, ...], raw: Mapping[int, bytes], where: str) -> dict[str, Any]:
    """The named tagged fields of a raw tag buffer (absent ones at their default). ``where``
    names the struct in a :class:`DecodeError` (``"FetchResponse partition"``)."""
    out: dict[str, Any] = {}
    for tf in tags:
        data = raw.get(tf.tag)
        if data is None:
            out[tf.name] = tf.default
            continue
        try:
            out[tf.name] = _plain(decode(tf.wire_type, data))
        except DecodeError as e:
            raise DecodeError(f"{where}: tagged field {tf.name} (tag {tf.tag}): {e}") from None
    return out


def _plain(value: Any) -> Any:
    """A struct value without an empty tag buffer, so it compares equal to a default."""
    if isinstance(value, Mapping) and not value.get("tagged_fields"):
        return {k: v for k, v in value.items() if k != "tagged_fields"}
    return value
