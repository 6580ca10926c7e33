"""Hypothesis strategies generated from the codec's own schemas (a helper, not a test)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from adapters.network.codec.primitives import UINT32_MAX, int_bounds
from adapters.network.codec.schema import Array, Bool, Bytes, Int, Str, Struct, TaggedFields, Type

TEXT = st.text(max_size=10)


def values(t: Type) -> st.SearchStrategy[Any]:
    """Every value ``t`` can encode, in the form ``decode`` returns."""
    match t:
        case Int(width=width):
            lo, hi = int_bounds(width)
            return st.integers(lo, hi)
        case Bool():
            return st.booleans()
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
