"""Strict readers for the JSON in Kafka's znodes: each raises ``ZnodeDecodeError`` naming the path.

A ``Reader`` wraps one znode's path so every check can say where it failed:
``r.int(obj, "leader", lo=-1)`` -> ``/brokers/topics/t/partitions/0/state: field 'leader' must
be an integer, not "1"``. Booleans are not integers here (Python's ``bool`` is an ``int``), floats
are not integers, and numbers outside Java's ``int`` (or ``long``) range are refused, since Kafka
could not have written them.
"""

from __future__ import annotations

import json
import re
from itertools import chain
from typing import Any, NoReturn

from adapters.zookeeper.codec.errors import ZnodeDecodeError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = re.compile(r"[0-9]+")
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
"""Kafka's legal topic names (``Topic.validate``), ``.`` and ``..`` excepted."""


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON Kafka writes")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key appears twice: name the first one
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice")
            seen.add(key)
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
"""Strict JSON: no duplicate keys, no NaN/Infinity (one decoder, not one per ``json.loads``)."""


def describe(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, bytes) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


class Reader:
    """Field checks for the znode at ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, reason: str) -> NoReturn:
        raise ZnodeDecodeError(self.path, reason)

    def text(self, data: bytes | None) -> str:
        if not data:
            self.fail("no data (empty znode)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.fail(f"data is not UTF-8 ({exc.reason} at byte {exc.start})")

    def json_object(self, data: bytes | None) -> dict[str, Any]:
        text = self.text(data)
        try:
            value = _DECODER.decode(text)
        except (ValueError, RecursionError) as exc:
            self.fail(f"data is not JSON ({exc}): {describe(text)}")
        if not isinstance(value, dict):
            self.fail(f"data must be a JSON object, not {kind(value)}")
        return value

    def field(self, obj: dict[str, Any], key: str, where: str = "") -> Any:
        if key not in obj:
            self.fail(f"field {key!r}{where} is missing")
        return obj[key]

    def integer(
        self,
        obj: dict[str, Any],
        key: str,
        *,
        lo: int = INT32_MIN,
        hi: int = INT32_MAX,
        where: str = "",
    ) -> int:
        return self.int_value(self.field(obj, key, where), f"field {key!r}{where}", lo=lo, hi=hi)

    def int_value(self, value: Any, what: str, *, lo: int = INT32_MIN, hi: int = INT32_MAX) -> int:
        if type(value) is not int:
            self.fail(f"{what} must be an integer, not {kind(value)} {describe(value)}")
        if not lo <= value <= hi:
            self.fail(f"{what} is {describe(value)}, outside {lo}..{hi}")
        return value

    def string(
        self,
        obj: dict[str, Any],
        key: str,
        *,
        where: str = "",
        nullable: bool = False,
        nonempty: bool = False,
    ) -> str | None:
        value = self.field(obj, key, where)
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            self.fail(f"field {key!r}{where} must be a string, not {kind(value)} {describe(value)}")
        if nonempty and not value:
            self.fail(f"field {key!r}{where} is empty")
        return value

    def long_string(self, obj: dict[str, Any], key: str, where: str = "") -> int:
        """A Java ``long`` Kafka writes as a decimal *string* (timestamps)."""
        value = self.string(obj, key, where=where)
        assert value is not None
        if not _DIGITS.fullmatch(value) or int(value) > INT64_MAX:
            self.fail(
                f"field {key!r}{where} must be a decimal string of a non-negative long, "
                f"not {describe(value)}"
            )
        return int(value)

    def version(self, obj: dict[str, Any], known: tuple[int, ...]) -> int:
        value = self.field(obj, "version")
        if type(value) is not int or value not in known:
            self.fail(f"unknown version {describe(value)} (known: {', '.join(map(str, known))})")
        return value

    def obj(self, value: Any, what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(f"{what} must be a JSON object, not {kind(value)} {describe(value)}")
        return value

    def array(self, value: Any, what: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(f"{what} must be an array, not {kind(value)} {describe(value)}")
        return value

    def broker_ids(self, value: Any, what: str, *, nonempty: bool = False) -> tuple[int, ...]:
        """A replica list or ISR: non-negative int32 broker ids, none twice."""
        ids = fast_broker_ids(value)
        if ids is not None and (ids or not nonempty):
            return ids
        return self._broker_ids(value, what, nonempty=nonempty)

    def _broker_ids(self, value: Any, what: str, *, nonempty: bool = False) -> tuple[int, ...]:
        """``broker_ids`` item by item, for the error message."""
        items = self.array(value, what)
        if nonempty and not items:
            self.fail(f"{what} is empty")
        ids = tuple(self.int_value(b, f"broker id in {what}", lo=0) for b in items)
        if len(set(ids)) != len(ids):
            twice = sorted({b for b in ids if ids.count(b) > 1})
            self.fail(f"{what} lists broker {twice[0]} twice: {describe(items)}")
        return ids

    def partition_key(self, key: str, what: str) -> int:
        """A partition id written as a JSON object key: ``"0"``, ``"12"``."""
        p = fast_partition_key(key)
        if p is not None:
            return p
        if not _DIGITS.fullmatch(key) or int(key) > INT32_MAX:
            self.fail(f"{what} has key {key!r}, which is not a partition id (0..{INT32_MAX})")
        return int(key)

    def topic(self, value: Any, what: str) -> str:
        if not isinstance(value, str):
            self.fail(f"{what} must be a string, not {kind(value)} {describe(value)}")
        if not legal_topic(value):
            self.fail(f"{what} {describe(value)} is not a legal Kafka topic name")
        return value


def fast_broker_ids(value: Any) -> tuple[int, ...] | None:
    """``value`` as broker ids if it is a list of distinct int32 broker ids, else None (the caller
    then checks item by item to say what is wrong). C-level calls only: a failover decodes
    hundreds of thousands of these lists."""
    if type(value) is not list:
        return None
    if not value:
        return ()
    if set(map(type, value)) != _INT_ONLY:  # bool is not int here, nor float
        return None
    if min(value) < 0 or max(value) > INT32_MAX or len(set(value)) != len(value):
        return None
    return tuple(value)


_INT_ONLY = {int}


def fast_assignment(value: Any) -> list[tuple[int, tuple[int, ...]]] | None:
    """A whole assignment object (``{"0": [1, 2], ...}``: partition-id keys, each a non-empty list
    of distinct int32 broker ids) checked with C-level calls over all partitions at once, as
    ``(partition, replicas)`` pairs sorted by partition; None if anything is off (the caller then
    checks partition by partition to say what)."""
    if type(value) is not dict:
        return None
    if not value:
        return []
    keys = list(value)
    lists = list(value.values())
    joined = "".join(keys)
    if not (joined.isascii() and joined.isdigit()) or min(map(len, keys)) < 1 \
            or max(map(len, keys)) > 10:
        return None
    parts = list(map(int, keys))
    if max(parts) > INT32_MAX or len(set(parts)) != len(parts):  # "1" and "01" are one id
        return None
    if set(map(type, lists)) != _LIST_ONLY:
        return None
    flat = list(chain.from_iterable(lists))
    if set(map(type, flat)) != _INT_ONLY or min(flat) < 0 or max(flat) > INT32_MAX:
        return None
    replicas = list(map(tuple, lists))
    # a topic repeats a few replica lists: check each distinct one (all items are ints by now,
    # so equal tuples really are equal lists) -- none empty, none naming a broker twice (its
    # set as long as it), C-level over the distinct lists
    distinct = list(set(replicas))
    lengths = list(map(len, distinct))
    if min(lengths) == 0 or lengths != list(map(len, map(set, distinct))):
        return None
    pairs = list(zip(parts, replicas, strict=True))
    pairs.sort()
    return pairs


_LIST_ONLY = {list}


def fast_partition_key(key: str) -> int | None:
    """A partition-id object key (``"0"``, ``"12"``: ASCII digits, at most int32), else None."""
    if key.isascii() and key.isdigit() and len(key) <= 10:
        p = int(key)
        if p <= INT32_MAX:
            return p
    return None


def legal_topic(name: str) -> bool:
    return bool(TOPIC_NAME.fullmatch(name)) and name not in (".", "..")


def dumps(value: Any) -> bytes:
    """Kafka's JSON: compact separators, keys in the order given, UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
