"""The KRaft invariants: ``CATALOGUE`` over ``KRaftView`` (pure; imports ``fsm`` only)."""

from invariants.kraft.catalogue import CATALOGUE
from invariants.kraft.view import BrokerFacts, ControllerFacts, KRaftView

__all__ = ["CATALOGUE", "BrokerFacts", "ControllerFacts", "KRaftView", "catalogue_markdown"]


def catalogue_markdown() -> str:
    """``specs/kraft-invariants.md``: generated from the KRaft invariants' docstrings."""
    from invariants.registry import KINDS

    lines = [
        "# KRaft invariant catalogue",
        "",
        "<!-- Generated from the docstrings in invariants/kraft/ -- do not edit by hand.",
        "     Regenerate: python -m invariants.kraft > specs/kraft-invariants.md -->",
        "",
        "Every invariant is a named predicate over a `KRaftView` (`invariants/kraft/view.py`):",
        "the committed metadata log and image, the quorum controllers, the KRaft brokers.",
        "Kinds: **state** (every reachable state), **transition** (every step, before ->",
        "after), **quiescent** (once nothing is in flight). The KRaft checker",
        "(`kcontrol check kraft-...`) checks them all.",
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
