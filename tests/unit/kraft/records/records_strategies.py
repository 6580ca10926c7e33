"""Hypothesis strategies for the metadata records, from the widths the schema declares (a
helper, not a test). test_records_schema pins the schema itself against Kafka's facts."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fsm.kraft.records.schema import SCHEMAS, Array, Scalar, Struct

_INT_BOUNDS = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
               "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
               "uint16": (0, 2**16 - 1)}

TEXT = st.text(max_size=12)


def ints(kind: str) -> st.SearchStrategy[int]:
    lo, hi = _INT_BOUNDS[kind]
    edges = [x for x in (lo, hi, -1, 0, 1, 127, 128, 255, 256) if lo <= x <= hi]
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def values(t: Scalar | Array | Struct) -> st.SearchStrategy[Any]:
    """Every value ``t`` holds, in the form decode returns."""
    if isinstance(t, Scalar):
        if t.kind in _INT_BOUNDS:
            base: st.SearchStrategy[Any] = ints(t.kind)
        else:
            base = {"bool": st.booleans(),
                    "float64": st.floats(allow_nan=False),
                    "string": TEXT,
                    "bytes": st.binary(max_size=40),
                    "uuid": st.binary(min_size=16, max_size=16)}[t.kind]
        return st.one_of(st.none(), base) if t.nullable else base
    if isinstance(t, Array):
        items = st.lists(values(t.item), max_size=5).map(tuple)
        return st.one_of(st.none(), items) if t.nullable else items
    return st.builds(t.cls, *[values(x.type) for x in t.fields])


def record_of(type_id: int) -> st.SearchStrategy[Any]:
    schema = SCHEMAS[type_id]
    fields = []
    for x in schema.struct.fields:
        s = values(x.type)
        if x.tag is not None or x.min_version:
            s = st.one_of(st.just(x.default), s)  # the default (omitted) often
        fields.append(s)
    return st.builds(schema.struct.cls, *fields)


records = st.sampled_from(sorted(SCHEMAS)).flatmap(record_of)
