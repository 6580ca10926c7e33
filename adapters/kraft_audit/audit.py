"""The live KRaft audit: two readings of the cluster a moment apart (``collect``), the
catalogue's state invariants on both, its transition invariants from the first to the
second, and -- once the cluster is quiet (the controllers settled at one offset, one active
controller, every live broker replayed to it) -- its quiescent ones: every live broker's
image equal to the committed one.

A cluster that does not get quiet within ``catch_up_s`` is itself reported:
``brokers_catch_up`` names each broker still behind the committed offset, ``one_active_controller``
the controllers' disagreement. These two belong to the audit, not to the pure catalogue:
they are about time, which the catalogue does not know.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from adapters.kraft_audit.collect import Ask, Reading, collect
from invariants.kraft import CATALOGUE
from invariants.registry import QUIESCENT, STATE, TRANSITION, Violation

BROKERS_CATCH_UP = "brokers_catch_up"
ONE_ACTIVE_CONTROLLER = "one_active_controller"
POLL_S = 0.1


@dataclass
class KRaftAudit:
    readings: list[Reading]
    quiet: bool
    violations: list[Violation] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def last(self) -> Reading:
        return self.readings[-1]

    def summary(self) -> str:
        r = self.last
        v = r.view
        active = [c.index for c in v.controllers if c.active]
        return (f"{len(r.controllers)} controller(s) read (active: "
                f"{', '.join(map(str, active)) or 'none'}), committed offset {v.hw}, "
                f"{len(v.committed.brokers)} registered broker(s) "
                f"({sum(1 for b in v.committed.brokers.values() if b.fenced)} fenced), "
                f"{len(v.committed.topics)} topic(s), {v.committed.partition_count()} "
                f"partition(s); {len(r.brokers)} broker process(es) read"
                + ("" if self.quiet else "; the cluster did not get quiet"))

    def to_json(self) -> dict[str, Any]:
        r = self.last
        return {"ok": not self.violations, "quiet": self.quiet,
                "committed_offset": r.view.hw,
                "controllers": {str(n): {"active": c.answer["active"],
                                         "epoch": c.answer["epoch"],
                                         "replayed_to": c.answer["replayed_to"],
                                         "committed_sha256": c.committed_sha}
                                for n, c in sorted(r.controllers.items())},
                "brokers": {str(n): {k: b.get(k) for k in ("state", "epoch", "offset")}
                            for n, b in sorted(r.brokers.items())},
                "unreachable": {str(n): why for n, why in sorted(r.unreachable.items())},
                "checked": self.checked,
                "violations": [{"invariant": x.invariant, "detail": x.detail}
                               for x in self.violations]}


def is_quiet(r: Reading) -> bool:
    v = r.view
    return (r.settled and not v.pending
            and all(b.offset >= v.hw for b in v.brokers if b.alive))


def audit(controllers: dict[int, Ask], brokers: dict[int, Ask], *, settle_s: float = 10.0,
          catch_up_s: float = 10.0) -> KRaftAudit:
    first = collect(controllers, brokers, settle_s=settle_s)
    deadline = time.monotonic() + catch_up_s
    second = collect(controllers, brokers, settle_s=settle_s)
    while not is_quiet(second) and time.monotonic() < deadline:
        time.sleep(POLL_S)
        second = collect(controllers, brokers, settle_s=settle_s)
    report = KRaftAudit([first, second], is_quiet(second))
    found: list[Violation] = []
    for inv in CATALOGUE:
        if inv.kind == STATE:
            found += inv.check(first.view) + inv.check(second.view)
        elif inv.kind == TRANSITION:
            found += inv.check(first.view, second.view)
        elif inv.kind == QUIESCENT and report.quiet:
            found += inv.check(second.view)
        else:
            continue
        report.checked.append(inv.name)
    if not report.quiet:
        v = second.view
        for b in v.brokers:
            if b.alive and b.offset < v.hw:
                found.append(Violation(BROKERS_CATCH_UP, f"broker {b.broker_id} replayed to "
                                       f"{b.offset}, the committed offset is {v.hw}, after "
                                       f"{catch_up_s:g} s"))
        active = [c.index for c in v.controllers if c.active]
        if len(active) != 1:
            found.append(Violation(ONE_ACTIVE_CONTROLLER, f"{len(active)} controllers are "
                                   f"active ({active}) after {catch_up_s:g} s"))
    report.checked += [BROKERS_CATCH_UP, ONE_ACTIVE_CONTROLLER]
    report.violations = list(dict.fromkeys(found))  # a state violation seen twice: once
    return report
