"""Checks on outside input: each returns the reason the data is malformed, or None."""

from __future__ import annotations

from fsm.values import TopicAssignment


def replicas_problem(replicas: tuple[int, ...]) -> str | None:
    if not replicas:
        return "empty replica list"
    if len(set(replicas)) != len(replicas):
        return f"replica named twice in {list(replicas)}"
    if any((not isinstance(r, int)) or r < 0 for r in replicas):
        return f"negative or non-integer broker id in {list(replicas)}"
    return None


def assignment_problem(assignment: TopicAssignment, first_new: int = 0) -> str | None:
    """A topic assignment must name partitions 0..n-1, each with a valid replica list."""
    parts = assignment.partitions
    if not parts:
        return "no partitions"
    ids = [p for p, _ in parts]
    if sorted(ids) != list(range(len(ids))):
        return f"partition ids are not 0..{len(ids) - 1}: {sorted(ids)}"
    for p, replicas in parts:
        if p >= first_new:
            problem = replicas_problem(replicas)
            if problem:
                return f"partition {p}: {problem}"
    return None


def topic_name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not name or "/" in name:
        return f"bad topic name {name!r}"
    return None
