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


def parse_replica_assignment(entries: Sequence[str]) -> Assignment:
    """``["0:1,2,3", "1:2,3,1"]`` -> ``{0: (1, 2, 3), 1: (2, 3, 1)}``. Raises ValueError with a
    message naming the faulty entry."""
    out: Assignment = {}
    for entry in entries:
        head, sep, tail = entry.partition(":")
        if not sep or not head.strip().isdigit():
            raise ValueError(f"{entry!r} is not PARTITION:BROKER,BROKER,... (e.g. 0:1,2,3)")
        p = int(head)
        if p in out:
            raise ValueError(f"partition {p} is assigned twice")
        try:
            replicas = tuple(int(b) for b in tail.split(",") if b.strip() != "")
        except ValueError:
            raise ValueError(f"{entry!r}: broker ids must be integers") from None
        if not replicas:
            raise ValueError(f"{entry!r}: partition {p} has no replicas")
        if any(b < 0 for b in replicas):
            raise ValueError(f"{entry!r}: broker ids must be non-negative")
        out[p] = replicas
    return out


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
