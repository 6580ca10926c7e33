"""``slot_setters``: the slot descriptors' ``__set__`` of a frozen, slotted dataclass, for
builders of its values on hot paths.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` by name; a
builder that calls ``object.__new__(cls)`` and then each slot's ``__set__`` makes the same
value about twice as fast -- as immutable as the other (``__setattr__`` still refuses). The
builder must set every field: ``slot_setters`` refuses a list of names that is not the
class's fields in order, so a field added later breaks the builder at import, not its values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any


def slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each of ``cls``'s slots named in ``names``, which must be every
    field of ``cls``, in order."""
    if names != tuple(f.name for f in fields(cls)):
        raise AssertionError(f"{cls.__name__}: the builder's fields {names} are not its own")
    return tuple(cls.__dict__[n].__set__ for n in names)
