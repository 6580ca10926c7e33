"""64-bit fingerprints of canonical snapshots, stable across processes.

``fingerprint(snapshot)`` is the first 8 bytes of blake2b over the pickled snapshot
(protocol 5). Pickle writes classes by module and name and strings by their bytes, so the
value depends only on the snapshot's content -- never on ``hash()`` (PYTHONHASHSEED differs
between Spark executors) or on ids. Snapshots are canonical (every dict/set sorted), so two
worlds in the same state get the same fingerprint whatever their history.

Speed: pickling a class or an enum member costs microseconds (an import lookup, a Python
``__reduce_ex__``). The pickler therefore starts from a *primed memo*: every class and enum
member of ``fsm`` and ``model_check.world``, saved once, in a fixed order (sorted by module
and name), so in a snapshot they are 2-byte memo references. The bytes are not meant to be
unpickled (the primer is not in them); they are as deterministic as the primer's order,
which depends only on the code.
"""

from __future__ import annotations

import enum
import hashlib
import importlib
import io
import pickle
import pkgutil

PROTOCOL = 5
_PACKAGES = ("fsm", "model_check.world")


def _classes() -> list[object]:
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
    out: list[object] = []
    for key in sorted(found):
        cls = found[key]
        out.append(cls)
        if issubclass(cls, enum.Enum):
            out.extend(cls)  # members in definition order
    return out


_primer: pickle.Pickler | None = None


def _primed_memo() -> object:
    global _primer
    if _primer is None:
        p = pickle.Pickler(io.BytesIO(), PROTOCOL)
        p.dump(tuple(_classes()))
        _primer = p
    return _primer.memo


def encode(snapshot: object) -> bytes:
    """The canonical bytes hashed by ``fingerprint`` (not loadable by ``pickle.loads``)."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, PROTOCOL)
    p.memo = _primed_memo()
    p.dump(snapshot)
    return buf.getvalue()


def fingerprint(snapshot: object) -> int:
    return int.from_bytes(hashlib.blake2b(encode(snapshot), digest_size=8).digest(), "little")


def fingerprint_plain(snapshot: object) -> int:
    """The same digest over a plain ``pickle.dumps`` (the baseline the benchmark reports)."""
    data = pickle.dumps(snapshot, PROTOCOL)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
