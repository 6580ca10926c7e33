"""One level of a breadth-first search over bare worlds (no view, no invariant): the
baseline the model-checker benchmarks measure the checker against."""

from __future__ import annotations

from model_check.memo import Memos
from model_check.world import World, WorldConfig, fingerprint


def next_level(frontier: list[tuple], config: WorldConfig, seen: set[int],
               describe: bool = True, limit: int | None = None,
               memos: Memos | None = None) -> tuple[list[tuple], int]:
    """Every successor of ``frontier``: ``(the new ones, in discovery order, how many
    successors were computed)``; ``seen`` gains the new fingerprints. With ``limit``, stops
    after the first parent that brings ``seen`` to it. ``memos``: the search's
    (``model_check.memo``), for the worlds it restores (None: run everything)."""
    nxt: list[tuple] = []
    successors = 0
    for snap in frontier:
        for action in World.restore(snap, config, memos).enabled_actions():
            child = World.restore(snap, config, memos)
            child.apply(action, describe=describe)
            s = child.snapshot()
            successors += 1
            fp = fingerprint(s)
            if fp not in seen:
                seen.add(fp)
                nxt.append(s)
        if limit is not None and len(seen) >= limit:
            break
    return nxt, successors
