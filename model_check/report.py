"""The ``--json`` report of a check (the same keys for every engine)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from model_check.counterexample import Trace
from model_check.search import Result


def report(result: Result, trace: Trace | None = None,
           saved: dict[str, Path] | None = None, **extra: object) -> dict:
    doc: dict = {
        "verdict": result.verdict,
        "scenario": result.scenario,
        "engine": result.engine,
        "states_generated": result.states_generated,
        "distinct_states": result.distinct_states,
        "depth": result.depth,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(result.states_per_second, 1),
        "bounded_by": result.bounded_by,
        "setup_steps": result.setup_steps,
        "symmetry": result.symmetry,
        "checks": result.checks,
        "levels": [asdict(lv) | {"seconds": round(lv.seconds, 3)} for lv in result.levels],
    }
    v = result.violation
    if v is not None:
        doc["invariant"] = v.invariant
        doc["detail"] = v.detail
        doc["violation_depth"] = v.depth
        doc["trace"] = trace.one_liners() if trace is not None else []
        if saved:
            doc["trace_files"] = {k: str(p) for k, p in saved.items()}
    if result.coverage is not None:
        doc["coverage"] = result.coverage.report()
    doc.update(extra)
    return doc
