"""Hypothesis strategies generated from the codec's own schemas (a helper, not a test)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from adapters.network.codec.primitives import UINT32_MAX, int_bounds
from adapters.network.codec.schema import (
    Array,
    Bool,
    Bytes,
    Field,
    Int,
    Str,
    Struct,
    TaggedFields,
    Type,
    UInt16,
    UuidType,
)

TEXT = st.text(max_size=10)


def values(t: Type) -> st.SearchStrategy[Any]:
    """Every value ``t`` can encode, in the form ``decode`` returns."""
    match t:
        case Int(width=width):
            lo, hi = int_bounds(width)
            return st.integers(lo, hi)
        case Bool():
            return st.booleans()
        case UInt16():
            return st.integers(0, 0xFFFF)
        case UuidType():
            return st.binary(min_size=16, max_size=16)
        case Str():
            return _maybe_null(TEXT, t.nullable)
        case Bytes():
            return _maybe_null(st.binary(max_size=10), t.nullable)
        case Array(item=item):
            return _maybe_null(st.lists(values(item), max_size=3), t.nullable)
        case Struct(fields=fields):
            return st.fixed_dictionaries({f.name: values(f.type) for f in fields})
        case TaggedFields():
            return st.dictionaries(st.integers(0, UINT32_MAX), st.binary(max_size=6), max_size=2)
    raise TypeError(t)


def _maybe_null(s: st.SearchStrategy[Any], nullable: bool) -> st.SearchStrategy[Any]:
    return st.none() | s if nullable else s


def values_with(t: Type, field: Callable[[Field], st.SearchStrategy[Any] | None]
                ) -> st.SearchStrategy[Any]:
    """Values of ``t`` like ``values``, but each struct field drawn from ``field(f)`` where it
    gives a strategy (None: the field's own values, walked the same way): how a test narrows
    the values to what another implementation can hold."""
    if isinstance(t, Struct):
        return st.fixed_dictionaries({f.name: _field_values(f, field) for f in t.fields})
    if isinstance(t, Array) and isinstance(t.item, Struct):
        items = st.lists(values_with(t.item, field), max_size=3)
        return st.none() | items if t.nullable else items
    return values(t)


def _field_values(f: Field, field: Callable[[Field], st.SearchStrategy[Any] | None]
                  ) -> st.SearchStrategy[Any]:
    chosen = field(f)
    return chosen if chosen is not None else values_with(f.type, field)
