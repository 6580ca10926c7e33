"""The auditor's reading of a live KRaft cluster: every controller's images and every broker's
replayed state, gathered over the nodes' admin sockets into one ``KRaftView``.

The processes do not stop for the audit, so "the same moment" is an offset: the auditor reads
the controllers until every one that answers has replayed to the same committed offset (at
most ``settle_s``; a busy cluster may never settle -- then the view is taken at the offset
the most controllers share, and ``settled`` says so), and brokers are compared with the
committed image only once the cluster is quiet (the catalogue's QUIESCENT invariants).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from adapters.kraft_audit.images import pages_of, read_image
from fsm.kraft.image import MetadataImage
from fsm.kraft.records.codec import decode_record
from invariants.kraft import BrokerFacts, ControllerFacts, KRaftView

Ask = Callable[[str, dict[str, Any]], dict[str, Any]]
"""``ask(op, args)``: one admin request to one node; raises on refusal or I/O failure."""

POLL_S = 0.05


class SparseLog(Sequence[Any]):
    """The committed log as the invariants index it (``view.log[offset]``), holding only the
    records the audit fetched: the registrations that brokers' epochs name. Other offsets
    read as None (no invariant reads them)."""

    def __init__(self, length: int, records: dict[int, Any]) -> None:
        self._length = length
        self._records = records

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._length))]
        if not 0 <= i < self._length:
            raise IndexError(i)
        return self._records.get(i)


@dataclass
class ControllerReading:
    node_id: int
    answer: dict[str, Any]
    committed: MetadataImage
    committed_sha: str
    image: MetadataImage
    image_sha: str


@dataclass
class Reading:
    """What the auditor read, and what it could not."""

    view: KRaftView
    controllers: dict[int, ControllerReading]
    brokers: dict[int, dict[str, Any]]
    settled: bool
    unreachable: dict[int, str] = field(default_factory=dict)


def read_controller(node_id: int, ask: Ask) -> ControllerReading:
    answer = ask("image", {})

    def later(start: int, sha: str) -> dict[str, Any]:
        return ask("image", {"start": start, "sha256": sha})["page"]

    committed, committed_sha = read_image(pages_of(answer["committed"], later))
    if "image" in answer:
        image, image_sha = read_image(pages_of(answer["image"], later))
    else:
        image, image_sha = committed, committed_sha
    return ControllerReading(node_id, answer, committed, committed_sha, image, image_sha)


def read_controllers(asks: dict[int, Ask], settle_s: float
                     ) -> tuple[dict[int, ControllerReading], dict[int, str], bool]:
    """Every controller's reading, retried until all that answer share one replayed offset
    (``True``) or ``settle_s`` has passed (``False``)."""
    deadline = time.monotonic() + settle_s
    while True:
        readings: dict[int, ControllerReading] = {}
        failed: dict[int, str] = {}
        for node_id, ask in sorted(asks.items()):
            try:
                readings[node_id] = read_controller(node_id, ask)
            except (OSError, ValueError, KeyError) as exc:
                failed[node_id] = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 -- an AdminError: the node refused
                failed[node_id] = str(exc)
        offsets = {r.answer["replayed_to"] for r in readings.values()}
        if readings and len(offsets) == 1:
            return readings, failed, True
        if time.monotonic() >= deadline:
            return readings, failed, False
        time.sleep(POLL_S)


def _broker_facts(b: dict[str, Any], ask: Ask) -> BrokerFacts:
    """A broker's ``broker_state`` answer as the invariants read it; its image's later pages
    come from ``broker_image``."""

    def later(start: int, sha: str) -> dict[str, Any]:
        return ask("broker_image", {"start": start, "sha256": sha})["page"]

    image = read_image(pages_of(b["image"], later))[0] if "image" in b else MetadataImage()
    leaders = tuple((bytes.fromhex(t), p, e) for t, p, e in b.get("leaders", ()))
    inc = b.get("incarnation_id")
    return BrokerFacts(int(b["broker_id"]), bool(b.get("alive", True)), str(b.get("state")),
                       bytes.fromhex(inc) if inc else None, b.get("epoch"),
                       int(b.get("offset", -1)), image, leaders)


def collect(controllers: dict[int, Ask], brokers: dict[int, Ask], *,
            settle_s: float = 10.0) -> Reading:
    """Read the cluster: the controllers (settled at one offset if they can be), then the
    brokers' ``broker_state`` (those that answer), then the registrations their epochs name
    -- from the log, or, where a snapshot replaced that part of it, from the committed
    image (a snapshot keeps each registration with its epoch)."""
    readings, unreachable, settled = read_controllers(controllers, settle_s)
    if not readings:
        raise ConnectionError("no controller answered: " + "; ".join(
            f"{n}: {why}" for n, why in sorted(unreachable.items())))
    active = [r for r in readings.values() if r.answer["active"]]
    # the committed image is the one at the highest replayed offset (the active controller's
    # when there is one and it is at least as far as the others)
    top = max(readings.values(), key=lambda r: (r.answer["replayed_to"], r.answer["active"]))
    hw = top.answer["replayed_to"]
    broker_answers: dict[int, dict[str, Any]] = {}
    for node_id, ask in sorted(brokers.items()):
        try:
            broker_answers[node_id] = ask("broker_state", {})
        except Exception as exc:  # noqa: BLE001 -- a broker that does not answer is reported
            unreachable[node_id] = f"{type(exc).__name__}: {exc}"
    facts = [_broker_facts(b, brokers[n]) for n, b in broker_answers.items()]
    epochs = sorted({f.epoch for f in facts if f.epoch is not None and 0 <= f.epoch <= hw})
    records: dict[int, Any] = {}
    if epochs:
        ask = controllers[top.node_id]
        got = ask("records_at", {"offsets": epochs})["records"]
        records = {int(o): decode_record(bytes.fromhex(h)) for o, h in got.items() if h}
        # an offset below the log start is in a snapshot now: the snapshot's registration
        # (the committed image's, whose epoch is that offset) stands for the record
        for reg in top.committed.brokers.values():
            if reg.epoch in epochs and reg.epoch not in records:
                records[reg.epoch] = reg.record()
    controller_facts = tuple(
        ControllerFacts(r.node_id, r.answer["active"], r.answer["replayed_to"], r.committed,
                        r.image, r.answer.get("waiting_answers", 0))
        for r in sorted(readings.values(), key=lambda r: r.node_id))
    view = KRaftView(hw=hw, log_end=max(r.answer["high_watermark"] for r in readings.values()),
                     log=SparseLog(hw + 1, records), committed=top.committed,  # type: ignore[arg-type]
                     controllers=controller_facts, brokers=tuple(facts),
                     pending=not settled or len(active) != 1)
    return Reading(view, readings, broker_answers, settled, unreachable)
