"""The Raft invariants: ``CATALOGUE`` over ``RaftView`` (pure; imports nothing of the checker
or the adapters)."""

from invariants.raft.catalogue import CATALOGUE
from invariants.raft.view import RaftView, VoterFacts

__all__ = ["CATALOGUE", "RaftView", "VoterFacts", "catalogue_markdown"]


def catalogue_markdown() -> str:
    """``specs/raft-invariants.md``: generated from the Raft invariants' docstrings."""
    from invariants.registry import KINDS

    lines = [
        "# Raft invariant catalogue",
        "",
        "<!-- Generated from the docstrings in invariants/raft/ -- do not edit by hand.",
        "     Regenerate: python -m invariants.raft > specs/raft-invariants.md -->",
        "",
        "Every invariant is a named predicate over a `RaftView` (`invariants/raft/view.py`):",
        "the voters of the metadata quorum (their logs, what is durable, what their state",
        "machines applied) and the ghost history of elections and commits. Kinds: **state**",
        "(every reachable state), **transition** (every step, before -> after). The Raft",
        "checker (`kcontrol check raft-...`) checks them all.",
        "",
        "| invariant | kind | source |",
        "| --- | --- | --- |",
    ]
    for inv in CATALOGUE:
        lines.append(f"| [`{inv.name}`](#{inv.name}) | {inv.kind} | {inv.source} |")
    for kind in KINDS:
        for inv in CATALOGUE:
            if inv.kind == kind:
                lines += ["", f"## {inv.name}", "", f"*{inv.kind}* -- {inv.source}", "",
                          inv.doc, "", f"**Premise** (where it is not vacuous): "
                          f"{inv.premise_doc}"]
    return "\n".join(lines) + "\n"
