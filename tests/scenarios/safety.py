"""A few safety checks over the whole world (the full catalogue is ``invariants/``, issue 6)."""

from __future__ import annotations

from fsm import zk_paths as P
from fsm.broker import ReplicaRole
from fsm.values import NO_LEADER, LeaderAndIsr
from model_check.world.world import World


def committers(w: World, tp: tuple[str, int]) -> list[int]:
    """Brokers that could commit on ``tp`` now: they believe they lead (not fenced) and
    every other member of their ISR view follows them (seed 001 "multiple leaders" §3)."""
    out = []
    for b in w.config.broker_ids:
        if not w.procs[b].up:
            continue
        view = w.brokers[b].can_commit_view(tp)
        if view is None:
            continue
        ok = True
        for m in view.isr:
            if m == b:
                continue
            r = w.brokers[m].replica(tp) if w.procs[m].up else None
            if r is None or r.role is not ReplicaRole.FOLLOWER or r.leader != b:
                ok = False
        if ok:
            out.append(b)
    return out


def check(w: World) -> list[str]:
    problems = []
    active = [(w.controllers[b].epoch, b) for b in w.config.broker_ids
              if w.procs[b].up and w.controllers[b].is_active]
    epochs = [e for e, _ in active]
    if len(set(epochs)) != len(epochs):
        problems.append(f"two active controllers with one epoch: {active}")
    for b in w.config.broker_ids:
        if not w.brokers[b].applied_ok():
            problems.append(f"broker {b} applied a request for another epoch: "
                            f"{w.brokers[b].applied}")
    tps = set()
    for t in w.zk.children(P.TOPICS):
        for p in w.zk.children(P.partitions(t)):
            tp = (t, int(p))
            tps.add(tp)
            li = w.zk.data(P.partition_state(*tp))
            if isinstance(li, LeaderAndIsr):
                if not li.isr:
                    problems.append(f"{t}-{p}: empty ISR")
                if li.leader != NO_LEADER and li.leader not in li.isr:
                    problems.append(f"{t}-{p}: leader {li.leader} not in ISR {li.isr}")
    for b in w.config.broker_ids:
        tps.update(tp for tp, _ in w.brokers[b].replicas())
    for tp in sorted(tps):
        c = committers(w, tp)
        if len(c) > 1:
            problems.append(f"{tp[0]}-{tp[1]}: brokers {c} can all commit")
    return problems
