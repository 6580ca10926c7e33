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

A ``Codec`` remembers nothing; the search's memos (``model_check.memo.codec``) remember
both directions by identity, and what the world's components derive from their snapshots
(``Codec.derived``: ZooKeeper's and the channels' snapshots decoded) -- the world's values are immutable and restored worlds share
them, so almost every call is one dict lookup -- and a world calls the codec it was given
(``World.codec``). Remembering never changes a result: encoding is a pure function of the
value's content, whatever the sharing.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

_PACKAGES = ("fsm", "model_check.world")
FROZENSET = "\x00frozenset"
_SCALARS = frozenset({int, str, bool, type(None), bytes})

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
"""The registry of the tagged classes (``_build_registry``, filled once from the code): a
constant of the code, not a memo of the search."""


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


class Codec:
    """``encode``/``decode`` remembering nothing (``PLAIN``: a world without memos). The
    search's memos remember both directions (``model_check.memo.codec.CodecMemo``): the
    methods recurse through ``self``, so a subclass's memo serves the parts of a value too."""

    __slots__ = ()

    def encode(self, x: Any) -> Any:
        """``x`` (an immutable value) in builtins only."""
        t = type(x)
        return x if t in _SCALARS else self.encode_new(x, t)

    def encode_once(self, x: Any) -> Any:
        """``encode(x)`` for a value made for one use (an event the world builds for one
        step): a memo remembers its parts, not the value itself."""
        return self.encode(x)

    def encode_new(self, x: Any, t: type) -> Any:
        """``encode(x)`` of a value of type ``t`` that is not a scalar, worked out."""
        enc = self.encode
        if t is tuple:
            items = [enc(y) for y in x]
            out: Any = x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)
        elif t is frozenset:
            out = (FROZENSET, *sorted([enc(y) for y in x]))
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
                out = (tag, *[enc(y) for y in x])
            else:
                out = (tag, *[enc(getattr(x, f)) for f in fields])
        return out

    def decode(self, x: Any) -> Any:
        """The value ``encode`` turned into ``x`` (equal to it)."""
        return x if type(x) is not tuple else self.decode_new(x)

    def decode_new(self, x: tuple) -> Any:
        """``decode(x)`` of a tuple, worked out."""
        dec = self.decode
        head = x[0] if x else None
        if type(head) is str and head[:1] == "\x00":
            if head == FROZENSET:
                return frozenset([dec(y) for y in x[1:]])
            if not _by_tag:
                _build_registry()
            kind, cls, _fields = _by_tag[head]
            if kind == _ENUM:
                return cls(x[1])
            if kind == _NT:
                return cls._make([dec(y) for y in x[1:]])  # type: ignore[attr-defined]
            return cls(*[dec(y) for y in x[1:]])
        items = [dec(y) for y in x]
        return x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)

    def decoded_dict(self, pairs: tuple) -> dict:
        """``{decode(k): decode(v) for k, v in pairs}``. The result may be shared (a memo's):
        callers copy it before changing it."""
        dec = self.decode
        return {dec(k): dec(v) for k, v in pairs}

    def derived(self, fn: Callable[[Any, Codec], Any], snap: tuple) -> Any:
        """``fn(snap, self)``: what a component works out of a snapshot of its own (its
        parts decoded) with this codec -- ``fn`` a module-level pure function, ``snap``
        immutable. A memo remembers it by the identity of ``snap`` (``CodecMemo``), so the
        result may be shared: callers copy what they change."""
        return fn(snap, self)


PLAIN = Codec()
"""The codec of a world without memos (and of tests and tools)."""
encode = PLAIN.encode
encode_once = PLAIN.encode_once
decode = PLAIN.decode
decoded_dict = PLAIN.decoded_dict


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
