"""Immutable ``fsm``/world values <-> builtins-only tuples (what a world snapshot holds).

A world snapshot is made only of ``tuple``, ``int``, ``str``, ``bool``, ``None`` and
``bytes``, so that its encoding (``fingerprint.encode``) is fast C code and canonical.
``encode(value)`` turns a value into that form:

* a builtin scalar stays itself; a tuple is encoded element by element (a tuple that needs
  no change is returned as is);
* a NamedTuple or frozen dataclass becomes ``(TAG, field, ...)`` (fields encoded, in
  declaration order), an enum member ``(TAG, value)``, a frozenset
  ``(FROZENSET, *sorted(encoded elements))`` -- sorted, so independent of ``hash()``.

``TAG`` is ``"\\x00" + qualname`` (``"\\x00" + module.qualname`` when two classes of the
scanned packages share a qualname): it depends only on the code, never on the process. No
data string starts with NUL, so ``decode`` tells a tagged tuple from a plain one.

Both directions are memoised **by identity** (the key is ``id(obj)``, the entry keeps
``obj`` alive, so an id is never reused while cached): the world's values are immutable
and restored worlds share them, so almost every call is one dict lookup. The memo is
bounded (cleared when full) and never changes a result: encoding is a pure function of
the value's content, whatever the sharing.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
from typing import Any

_PACKAGES = ("fsm", "model_check.world")
FROZENSET = "\x00frozenset"
_SCALARS = frozenset({int, str, bool, type(None), bytes})
_LIMIT = 200_000

# spec kinds
_NT, _DC, _ENUM = 0, 1, 2


def _scan() -> list[type]:
    found: dict[str, type] = {}
    for pkg_name in _PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names = [pkg_name] + [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".")]
        for name in names:
            if name.endswith((".runner", "__main__")):
                continue
            mod = importlib.import_module(name)
            for obj in vars(mod).values():
                if isinstance(obj, type) and obj.__module__ == name:
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


_specs: dict[type, tuple[int, str, tuple[str, ...]]] = {}
_by_tag: dict[str, tuple[int, type, tuple[str, ...]]] = {}


def _build_registry() -> None:
    classes = _scan()
    counts: dict[str, int] = {}
    for cls in classes:
        counts[cls.__qualname__] = counts.get(cls.__qualname__, 0) + 1
    for cls in classes:
        q = cls.__qualname__
        tag = "\x00" + (q if counts[q] == 1 else f"{cls.__module__}.{q}")
        if issubclass(cls, enum.Enum):
            spec = (_ENUM, tag, ())
        elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
            spec = (_NT, tag, tuple(cls._fields))
        elif dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            fields = dataclasses.fields(cls)
            if any(not f.init or f.kw_only for f in fields):
                continue  # not a plain value: never in a snapshot
            spec = (_DC, tag, tuple(f.name for f in fields))
        else:
            continue
        _specs[cls] = spec
        _by_tag[tag] = (spec[0], cls, spec[2])


_enc: dict[int, tuple[object, object]] = {}  # id(value) -> (value, its encoding)
_dec: dict[int, tuple[object, object]] = {}  # id(encoding) -> (encoding, its value)
_old_enc: dict[int, tuple[object, object]] = {}
_old_dec: dict[int, tuple[object, object]] = {}
"""The memos in two generations: when the young one is full it becomes the old one (the
previous old one is dropped), and an entry found in the old one moves back to the young.
What is still in use survives a turnover: a search's memo never falls off a cliff."""


def _remember(obj: object, enc: object) -> None:
    global _enc, _dec, _old_enc, _old_dec
    if len(_enc) >= _LIMIT:
        _old_enc, _old_dec = _enc, _dec
        _enc, _dec = {}, {}
    _enc[id(obj)] = (obj, enc)
    _dec[id(enc)] = (enc, obj)


def _old_encoding(x: object) -> tuple[object, object] | None:
    hit = _old_enc.get(id(x))
    if hit is not None and hit[0] is x:
        _remember(x, hit[1])
        return hit
    return None


def _old_decoding(x: object) -> tuple[object, object] | None:
    hit = _old_dec.get(id(x))
    if hit is not None and hit[0] is x:
        _remember(hit[1], x)
        return hit
    return None


def encode(x: Any) -> Any:
    """``x`` (an immutable value) in builtins only."""
    t = type(x)
    if t in _SCALARS:
        return x
    hit = _enc.get(id(x))
    if hit is not None and hit[0] is x:
        return hit[1]
    hit = _old_encoding(x) if _old_enc else None
    if hit is not None:
        return hit[1]
    out = _encode_new(x, t)
    _remember(x, out)
    return out


def encode_once(x: Any) -> Any:
    """``encode(x)`` for a value made for one use (an event the world builds for one step):
    its parts are remembered as ``encode`` does, the value itself is not -- remembering
    every such value would fill the memo and clear it over and over."""
    t = type(x)
    if t in _SCALARS:
        return x
    hit = _enc.get(id(x))
    if hit is not None and hit[0] is x:
        return hit[1]
    hit = _old_encoding(x) if _old_enc else None
    if hit is not None:
        return hit[1]
    return _encode_new(x, t)


def _encode_new(x: Any, t: type) -> Any:
    if t is tuple:
        items = [encode(y) for y in x]
        out: Any = x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)
    elif t is frozenset:
        out = (FROZENSET, *sorted([encode(y) for y in x]))
    else:
        if not _specs:
            _build_registry()
        spec = _specs.get(t)
        if spec is None:
            raise TypeError(f"cannot encode {t.__qualname__} in a snapshot: {x!r}")
        kind, tag, fields = spec
        if kind == _ENUM:
            out = (tag, x.value)
        elif kind == _NT:
            out = (tag, *[encode(y) for y in x])
        else:
            out = (tag, *[encode(getattr(x, f)) for f in fields])
    return out


def decode(x: Any) -> Any:
    """The value ``encode`` turned into ``x`` (equal to it, often the very object)."""
    if type(x) is not tuple:
        return x
    hit = _dec.get(id(x))
    if hit is not None and hit[0] is x:
        return hit[1]
    hit = _old_decoding(x) if _old_dec else None
    if hit is not None:
        return hit[1]
    head = x[0] if x else None
    if type(head) is str and head[:1] == "\x00":
        if head == FROZENSET:
            out: Any = frozenset([decode(y) for y in x[1:]])
        else:
            if not _by_tag:
                _build_registry()
            kind, cls, _fields = _by_tag[head]
            if kind == _ENUM:
                out = cls(x[1])
            elif kind == _NT:
                out = cls._make([decode(y) for y in x[1:]])  # type: ignore[attr-defined]
            else:
                out = cls(*[decode(y) for y in x[1:]])
    else:
        items = [decode(y) for y in x]
        out = x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)
    _remember(out, x)
    return out


_tables: dict[int, tuple[object, dict]] = {}


def decoded_dict(pairs: tuple) -> dict:
    """``{decode(k): decode(v) for k, v in pairs}``, memoised by the identity of ``pairs``.
    The result is shared: callers copy it before changing it."""
    hit = _tables.get(id(pairs))
    if hit is not None and hit[0] is pairs:
        return hit[1]
    d = {decode(k): decode(v) for k, v in pairs}
    if len(_tables) >= _LIMIT // 10:
        _tables.clear()
    _tables[id(pairs)] = (pairs, d)
    return d


def is_builtin(x: Any) -> bool:
    """Whether ``x`` is made only of tuple/int/str/bool/None/bytes (tests, checks)."""
    t = type(x)
    if t is tuple:
        return all(is_builtin(y) for y in x)
    return t in (int, str, bool, type(None), bytes)


def tag_of(cls: type) -> tuple[str, tuple[str, ...]]:
    """``(tag, field names)`` of a class ``encode`` tags (KeyError for any other)."""
    if not _specs:
        _build_registry()
    _kind, tag, fields = _specs[cls]
    return tag, fields


def tagged_positions(layout: type) -> Any:
    """``fsm.snapshot_fields.positions`` for the encoding of a NamedTuple ``layout`` value,
    ``(TAG, *fields)``: the instance of ``layout`` whose every field holds its position in
    that tuple (``tagged_positions(Znode).czxid == 4``)."""
    return layout._make(range(1, len(layout._fields) + 1))  # type: ignore[attr-defined]
