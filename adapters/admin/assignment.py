"""Kafka's replica assignment rule (``AdminUtils.assignReplicasToBrokersRackUnaware``), pure.

Brokers are taken sorted by id. Partition ``p`` (counted from ``start_partition``) gets its first
replica at index ``(p + start_index) % n``; the followers come after it at a shift that grows by
one every ``n`` partitions, so that replica sets differ between rounds::

    shift(j)       = 1 + (replica_shift + j) % (n - 1)
    follower j     = brokers[(first + shift(j)) % n]
    replica_shift += 1 whenever p > 0 and p % n == 0

``start_index`` and the initial ``replica_shift`` are random in Kafka unless fixed (as they are
when partitions are added: both are the index of partition 0's first replica). Leaders (first
replicas) are spread round robin: over any ``N`` consecutive partitions each broker leads
``N // n`` or ``N // n + 1`` of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from adapters.admin.errors import AdminError

Assignment = dict[int, tuple[int, ...]]


def assign_replicas(
    brokers: Iterable[int],
    partitions: int,
    replication_factor: int,
    *,
    start_index: int | None = None,
    replica_shift: int | None = None,
    start_partition: int = 0,
    rng: random.Random | None = None,
) -> Assignment:
    """``{partition: replicas}`` for ``partitions`` new partitions numbered from
    ``start_partition``. ``start_index``/``replica_shift`` default to ``start_index`` when it is
    given, else both are drawn at random as Kafka does. Refusals raise ``AdminError`` with
    Kafka's wording."""
    ids = sorted(set(brokers))
    if partitions <= 0:
        raise AdminError("Number of partitions must be larger than 0.", "INVALID_PARTITIONS")
    if replication_factor <= 0:
        raise AdminError("Replication factor must be larger than 0.", "INVALID_REPLICATION_FACTOR")
    if replication_factor > len(ids):
        raise AdminError(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{len(ids)}. Registered brokers: {_ids(ids) or 'none'}.",
            "INVALID_REPLICATION_FACTOR",
        )
    n = len(ids)
    draw = rng or random.Random()
    if start_index is None:
        start_index = draw.randrange(n)
        shift = draw.randrange(n) if replica_shift is None else replica_shift
    else:
        shift = start_index if replica_shift is None else replica_shift
    out: Assignment = {}
    for p in range(max(0, start_partition), max(0, start_partition) + partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[(first + 1 + (shift + j) % (n - 1)) % n])
        out[p] = tuple(replicas)
    return out


FORMAT_HINT = ("Kafka's format: partitions separated by commas, each partition's brokers by "
               "colons, the first one its preferred leader (1:2,3:4 puts partition 0 on brokers "
               "1,2 and partition 1 on brokers 3,4)")


def parse_replica_assignment(text: str) -> list[tuple[int, ...]]:
    """Kafka's ``--replica-assignment`` (``kafka-topics``): ``"1:2,3:4"`` -> ``[(1, 2), (3, 4)]``,
    the replica lists of consecutive partitions in order. Spaces around ids are ignored. Raises
    ValueError naming the faulty partition and recalling the format; every partition must list
    distinct non-negative broker ids, and as many as the first partition (Kafka's checks)."""
    if not text.strip():
        raise ValueError(f"the replica assignment is empty; {FORMAT_HINT}")
    out: list[tuple[int, ...]] = []
    for p, entry in enumerate(text.split(",")):
        tokens = [t.strip() for t in entry.split(":")]
        if tokens == [""]:
            raise ValueError(f"partition {p} lists no broker in {text!r}; {FORMAT_HINT}")
        bad = next((t for t in tokens if not (t.isascii() and t.isdigit())), None)
        if bad is not None:
            what = "an empty broker id" if bad == "" else f"{bad!r}, which is not a broker id"
            raise ValueError(f"partition {p} ({entry.strip()!r}) has {what}; {FORMAT_HINT}")
        replicas = tuple(int(t) for t in tokens)
        if len(set(replicas)) != len(replicas):
            twice = sorted({b for b in replicas if replicas.count(b) > 1})
            raise ValueError(f"partition {p} ({entry.strip()!r}) lists broker {twice[0]} twice")
        if out and len(replicas) != len(out[0]):
            raise ValueError(
                f"partition {p} ({entry.strip()!r}) has {len(replicas)} replica(s), partition 0 "
                f"has {len(out[0])}: every partition needs the same number; {FORMAT_HINT}")
        out.append(replicas)
    return out


def number_partitions(replica_lists: Sequence[tuple[int, ...]], existing: int, total: int
                      ) -> Assignment:
    """The partition ids of a ``--replica-assignment`` given when growing a topic from
    ``existing`` to ``total`` partitions: a list of the new partitions only (numbered from
    ``existing``), or of all ``total`` of them, whose first ``existing`` entries are then
    ignored, as Kafka's tool does. Any other length is an ``AdminError``."""
    added = total - existing
    if len(replica_lists) == added:
        return {existing + i: r for i, r in enumerate(replica_lists)}
    if len(replica_lists) == total:
        return {p: replica_lists[p] for p in range(existing, total)}
    raise AdminError(
        f"The replica assignment lists {len(replica_lists)} partition(s); growing from "
        f"{existing} to {total} partitions needs the {added} new one(s), or all {total}.",
        "INVALID_REPLICA_ASSIGNMENT",
    )


def validate_assignment(
    assignment: Assignment,
    registered: Iterable[int],
    *,
    first_partition: int = 0,
    replication_factor: int | None = None,
) -> None:
    """Kafka's checks on a manual assignment (``AdminZkClient.validateReplicaAssignment``):
    partitions numbered consecutively from ``first_partition``, the same replication factor
    everywhere, no broker twice in one list, and (kcontrol's addition) only registered brokers."""
    if not assignment:
        raise AdminError("The replica assignment is empty.", "INVALID_REPLICA_ASSIGNMENT")
    expected = list(range(first_partition, first_partition + len(assignment)))
    if sorted(assignment) != expected:
        raise AdminError(
            f"Partitions should be consecutive and start from {first_partition}: "
            f"got {_ids(sorted(assignment))}.",
            "INVALID_REPLICA_ASSIGNMENT",
        )
    for p, replicas in sorted(assignment.items()):
        if len(set(replicas)) != len(replicas):
            raise AdminError(
                f"Duplicate replica assignment found: partition {p} lists {_ids(replicas)}.",
                "INVALID_REPLICA_ASSIGNMENT",
            )
    sizes = {len(r) for r in assignment.values()}
    if len(sizes) != 1:
        raise AdminError(
            "All partitions should have the same number of replicas.",
            "INVALID_REPLICA_ASSIGNMENT",
        )
    if replication_factor is not None and sizes != {replication_factor}:
        raise AdminError(
            f"The replica assignment has {sizes.pop()} replicas per partition, "
            f"not the replication factor {replication_factor}.",
            "INVALID_REPLICA_ASSIGNMENT",
        )
    known = set(registered)
    unknown = sorted({b for r in assignment.values() for b in r} - known)
    if unknown:
        raise AdminError(
            f"The replica assignment names broker(s) that are not registered: {_ids(unknown)} "
            f"(registered: {_ids(sorted(known)) or 'none'}).",
            "BROKER_NOT_AVAILABLE",
        )


def _ids(ids: Iterable[int]) -> str:
    return ",".join(str(i) for i in ids)
