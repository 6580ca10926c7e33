"""Where a new partition's replicas go: rack-aware, over the usable brokers (registered,
unfenced, not in controlled shutdown), deterministic.

Brokers are laid out rack by rack in turn (rack a's first, rack b's first, ..., rack a's
second, ...), as Kafka's rack-aware assignment does; partition ``p`` starts at position
``start + p`` and takes the next brokers in that ring, preferring a rack it does not use yet
until every rack is used. ``start`` comes from the topic id, which the shell draws at random,
so topics do not all start on the same broker (the core itself has no randomness)."""

from __future__ import annotations

from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import Replicas


def rack_alternated(brokers: dict[int, str | None]) -> list[int]:
    racks: dict[str, list[int]] = {}
    for b in sorted(brokers):
        racks.setdefault(brokers[b] or "", []).append(b)
    columns = [racks[r] for r in sorted(racks)]
    out: list[int] = []
    for i in range(max((len(c) for c in columns), default=0)):
        out += [c[i] for c in columns if i < len(c)]
    return out


def start_of(topic_id: Uuid, n: int) -> int:
    return int.from_bytes(topic_id, "big") % n if n else 0


def place(brokers: dict[int, str | None], num_partitions: int, replication_factor: int,
          start: int, first_partition: int = 0) -> list[Replicas]:
    """Replica lists for partitions ``first_partition .. first_partition+num_partitions-1``;
    ``brokers`` maps each usable broker to its rack. The caller checks the factor fits."""
    ring = rack_alternated(brokers)
    n = len(ring)
    all_racks = {brokers[b] or "" for b in ring}
    out: list[Replicas] = []
    for p in range(first_partition, first_partition + num_partitions):
        chosen: list[int] = []
        used: set[str] = set()
        for k in range(n):
            if len(chosen) == replication_factor:
                break
            b = ring[(start + p + k) % n]
            if (brokers[b] or "") in used and used != all_racks:
                continue
            chosen.append(b)
            used.add(brokers[b] or "")
            if used == all_racks:
                used = set()
        for k in range(n):  # fewer racks than the factor: fill from the ring in order
            if len(chosen) == replication_factor:
                break
            b = ring[(start + p + k) % n]
            if b not in chosen:
                chosen.append(b)
        out.append(tuple(chosen))
    return out
