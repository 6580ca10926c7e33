"""The ledger of committed records: a record once committed must never disappear or change.

After every settle the campaign extends the ledger with what the active controller's log
holds between the ledger's end and its high watermark (``extend``), then compares every
running controller's log with it (``check``): each batch a controller holds below its high
watermark and below the ledger's end must be the ledger's batch at that offset -- the same
end offset, batch epoch, control flag and record digests -- and each ledger batch between a
controller's log start and its high watermark must be there. Anything else is a lost
committed record, reported with its offset and the node.

Offsets below a node's log start live in its snapshot: the snapshot must end at or below the
committed offset, and the committed record before its end must be of the snapshot's epoch;
its content is checked through the committed image (the lost-topics check and the audit),
not record by record.

The logs are read over the controllers' admin sockets (``log_digests``:
``adapters.kraft_audit.node_ops``), a page at a time. Bounded: at most ``max_records``
records are kept (16 hex digits each); past that the ledger stops growing and says so.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Ask = Callable[[str, dict[str, Any]], dict[str, Any]]
PAGE_RECORDS = 5_000
MAX_PAGES = 2_000
MAX_RECORDS = 2_000_000
MAX_GAPS = 10_000


@dataclass(frozen=True)
class LedgerBatch:
    base: int
    end: int
    epoch: int
    control: bool
    digests: tuple[str, ...]


@dataclass
class NodeLog:
    """One controller's committed log as ``log_digests`` pages give it."""

    node: str
    log_start: int
    high_watermark: int
    snapshot: tuple[int, int] | None
    batches: list[LedgerBatch]
    read_from: int = 0
    """Where the reading started (batches below it were not asked for)."""


def _batch(row: list[Any]) -> LedgerBatch:
    base, epoch, control, digests = row[:4]
    if control:
        count = int(row[4]) if len(row) > 4 else 1
        return LedgerBatch(int(base), int(base) + count, int(epoch), True, tuple(digests))
    return LedgerBatch(int(base), int(base) + len(digests), int(epoch), False, tuple(digests))


def read_log(node: str, ask: Ask, start: int = 0, *, page: int = PAGE_RECORDS) -> NodeLog:
    """The node's committed batches from ``start`` (or its log start) to its high watermark
    as it was at the first page."""
    first = ask("log_digests", {"from": start, "max_records": page})
    hw = int(first["high_watermark"])
    snap = first.get("snapshot")
    out = NodeLog(node, int(first["log_start"]), hw,
                  None if snap is None else (int(snap[0]), int(snap[1])), [],
                  max(start, int(first["log_start"])))
    answer = first
    for _ in range(MAX_PAGES):
        out.batches += [b for b in map(_batch, answer["batches"]) if b.end <= hw]
        at = int(answer["next"])
        if at >= hw or not answer["batches"]:
            break
        answer = ask("log_digests", {"from": at, "max_records": page})
    return out


@dataclass
class Ledger:
    max_records: int = MAX_RECORDS
    batches: dict[int, LedgerBatch] = field(default_factory=dict)
    bases: list[int] = field(default_factory=list)
    """The batches' base offsets, ascending (they are appended in order)."""
    end: int = 0
    records: int = 0
    full: bool = False
    skipped: int = 0
    """Offsets that went into a snapshot (below the active controller's log start) before
    the ledger read them: not checked record by record."""
    gaps: list[tuple[int, int]] = field(default_factory=list)
    """Those offsets' ranges ``[from, to)`` (at most ``MAX_GAPS``; past that the oldest are
    merged)."""

    def extend(self, log: NodeLog) -> list[dict[str, Any]]:
        """Append ``log``'s batches past the ledger's end (the active controller's committed
        log); what disagrees with the ledger where they overlap is returned as losses."""
        lost = self.compare(log)
        if self.end < log.log_start <= log.high_watermark:
            # the active controller's snapshot holds the offsets from the ledger's end to its
            # log start, committed (a snapshot is taken at or below the high watermark), and
            # the log below it is gone: the ledger moves past them even when no batch follows
            self._skip_to(log.log_start)
        for b in log.batches:
            if b.base < self.end:
                continue
            if b.base != self.end:
                if self.end < log.log_start:  # below its log start: a snapshot holds it
                    self._skip_to(b.base)
                else:
                    lost.append(_loss(log.node, self.end, "a gap in the committed log: no "
                                      f"batch at {self.end}, the next starts at {b.base}"))
                    self.end = b.base
            if self.records + len(b.digests) > self.max_records:
                self.full = True
                break
            self.batches[b.base] = b
            self.bases.append(b.base)
            self.records += len(b.digests)
            self.end = b.end
        return lost

    def compare(self, log: NodeLog) -> list[dict[str, Any]]:
        """Every disagreement between ``log`` and the ledger, as loss rows."""
        out = []
        held = {b.base: b for b in log.batches}
        if log.snapshot is not None:
            out += self._snapshot_problems(log, log.snapshot)
        for b in log.batches:
            if b.base >= self.end:
                break
            want = self.batches.get(b.base)
            if want is None and self.in_gap(b):
                continue  # the ledger never saw these offsets
            if want is None:
                out.append(_loss(log.node, b.base, f"a batch [{b.base}, {b.end}) in epoch "
                                 f"{b.epoch} where the ledger has none starting there"))
            elif want != b:
                out.append(_loss(log.node, b.base, _difference(want, b)))
        for base, want in self.batches.items():
            if base >= max(log.read_from, log.log_start) and want.end <= log.high_watermark \
                    and base not in held:
                out.append(_loss(log.node, base, f"the committed batch [{base}, {want.end}) "
                                 f"of epoch {want.epoch} is missing (log start "
                                 f"{log.log_start}, high watermark {log.high_watermark})"))
        return out


    def _snapshot_problems(self, log: NodeLog, snap: tuple[int, int]) -> list[dict[str, Any]]:
        """A snapshot holds committed records only: it ends at or below the committed offset
        (the node's high watermark -- which a restarted node learns again from the leader,
        so the ledger's end counts too), and the record before its end is of its epoch."""
        end, epoch = snap
        if end > max(log.high_watermark, self.end):
            return [_loss(log.node, end, f"a snapshot ends at {end}, past the committed "
                          f"offset (the node's high watermark {log.high_watermark}, the "
                          f"ledger's end {self.end})")]
        held = self.batch_holding(end - 1)
        if held is not None and held.epoch != epoch:
            return [_loss(log.node, end, f"a snapshot ending at {end} names epoch {epoch}; "
                          f"the committed record before it is of epoch {held.epoch}")]
        return []

    def batch_holding(self, offset: int) -> LedgerBatch | None:
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0:
            return None
        b = self.batches[self.bases[i]]
        return b if b.base <= offset < b.end else None

    def _skip_to(self, offset: int) -> None:
        self.skipped += offset - self.end
        self._gap(self.end, offset)
        self.end = offset

    def _gap(self, start: int, end: int) -> None:
        self.gaps.append((start, end))
        if len(self.gaps) > MAX_GAPS:
            (a, _), (_, d) = self.gaps[0], self.gaps[1]
            self.gaps[:2] = [(a, d)]

    def in_gap(self, b: LedgerBatch) -> bool:
        return any(start <= b.base and b.end <= end for start, end in self.gaps)


def _difference(want: LedgerBatch, got: LedgerBatch) -> str:
    if (want.end, want.epoch, want.control) != (got.end, got.epoch, got.control):
        return (f"batch [{got.base}, {got.end}) epoch {got.epoch}"
                f"{' control' if got.control else ''}; the ledger has [{want.base}, "
                f"{want.end}) epoch {want.epoch}{' control' if want.control else ''}")
    changed = [want.base + i for i, (a, b) in enumerate(zip(want.digests, got.digests,
                                                              strict=False)) if a != b]
    return f"records changed at offsets {changed[:10]} (epoch {got.epoch})"


def _loss(node: str, offset: int, detail: str) -> dict[str, Any]:
    return {"node": node, "offset": offset, "detail": detail}


__all__ = ["Ledger", "LedgerBatch", "NodeLog", "read_log"]
