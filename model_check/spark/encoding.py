"""What travels between the driver and the executors: states, paths, the visited store.

* States travel in **bundles**: ``pack_bundle(items)`` is one ``marshal`` (format 4) dump of
  a list of tuples holding the world's builtins-only snapshots. Builtins only is what makes
  marshal usable (a ``standard`` state loads in ~60 us where a pickle takes ~265 us), and
  format 4 writes an object that occurs twice once and refers to it after: sibling states
  share most components, so a bundle is several times smaller than its states one by one,
  and the states loaded from it share those components again -- the identity the world's
  codec and the fingerprint memoise on. Spark compresses bundles (lz4) in the shuffle and,
  with ``spark.rdd.compress``, in storage. Driver and executors run one Python version, as
  PySpark requires, so the format is the same on both. The fingerprint is never taken over
  these bytes (it is ``model_check.world.fingerprint`` of the unpacked snapshot, as in the
  local engine).
* States of different bundles share nothing: the task that expands them maps their
  components onto the ones its process already holds (``World.canonical``).
* A **path** is the action indices from the start state, two bytes each, big-endian, so
  that ``bytes`` order on paths of one length is the lexicographic order of the indices:
  the order in which the local engine discovers a level (its frontier is its parents'
  order, then ``enabled_actions()`` order). The smallest path that reaches a state is the
  one the local engine records, so keeping the minimum gives the same parent and the same
  counterexample whatever the partitioning.
* The **visited store** of a partition is four parallel arrays: keys (``Q``), parent keys
  (``Q``), action indices (``i``; ``ROOT`` for the start state) and the partitions holding
  the parents (``i``), as raw bytes. Turning them into a ``set`` is one C-level pass.
"""

from __future__ import annotations

import marshal
import struct
from array import array

MAX_ACTIONS = 1 << 16
"""Action indices must fit the two bytes of a path step."""

_STEP = struct.Struct(">H")


MARSHAL_VERSION = 4
ROOT_PARTITION = -1
"""The parent partition recorded for the start state (it has no parent)."""


def pack_bundle(items: list[tuple]) -> bytes:
    return marshal.dumps(items, MARSHAL_VERSION)


def unpack_bundle(blob: bytes) -> list[tuple]:
    return marshal.loads(blob)


def step(index: int) -> bytes:
    """One path step; raises if the world offers more actions than a step can name."""
    if not 0 <= index < MAX_ACTIONS:
        raise ValueError(f"action index {index} does not fit a path step (< {MAX_ACTIONS})")
    return _STEP.pack(index)


def last_index(path: bytes) -> int:
    return _STEP.unpack_from(path, len(path) - 2)[0]


def path_indices(path: bytes) -> tuple[int, ...]:
    assert len(path) % 2 == 0, f"a path has two bytes per step, got {len(path)} bytes"
    return tuple(i for (i,) in _STEP.iter_unpack(path))


class VisitedStore:
    """The keys one partition has seen, with each one's parent pointer: the parent's key,
    the action index from it, and the partition that holds the parent (``ROOT_PARTITION``
    for the start state)."""

    __slots__ = ("fps", "index", "parents", "parts")

    def __init__(self, fps: bytes = b"", parents: bytes = b"", index: bytes = b"",
                 parts: bytes = b"") -> None:
        self.fps = array("Q", fps)
        self.parents = array("Q", parents)
        self.index = array("i", index)
        self.parts = array("i", parts)
        assert len(self.fps) == len(self.parents) == len(self.index) == len(self.parts), \
            "visited arrays differ"

    def __len__(self) -> int:
        return len(self.fps)

    def add(self, fps: list[int], parents: list[int], index: list[int],
            parts: list[int]) -> None:
        self.fps.extend(fps)
        self.parents.extend(parents)
        self.index.extend(index)
        self.parts.extend(parts)

    def parent_of(self, fp: int) -> tuple[int, int, int] | None:
        """``(parent key, action index, parent's partition)`` of ``fp``, or None if it is
        not here."""
        try:
            i = self.fps.index(fp)
        except ValueError:
            return None
        return self.parents[i], self.index[i], self.parts[i]

    def to_bytes(self) -> tuple[bytes, bytes, bytes, bytes]:
        return (self.fps.tobytes(), self.parents.tobytes(), self.index.tobytes(),
                self.parts.tobytes())
