"""Preferred replica election: manual (``/admin/preferred_replica_election``) and automatic.

Manual: every named partition (skipping unknown ones and topics being deleted) moves its
leadership to its first replica when that replica is live and in the ISR; the admin
znode is deleted (also when it names no partition). An absent znode (the request's
``present`` is False: the watch fired on its deletion) is no request at all. Automatic (AUTO_REBALANCE timer, ``auto.leader.rebalance.enable``): per
broker, imbalance = partitions whose preferred replica is that broker but are led by
another / partitions whose preferred replica is that broker; above
``leader.imbalance.per.broker.percentage`` the broker's partitions are moved back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.plan import Plan
from fsm.controller.records import PREFERRED
from fsm.effects import DeleteOp, StartTimer
from fsm.events import PreferredElectionRequest, TimerKind

if TYPE_CHECKING:
    from fsm.controller.controller import Controller


class PreferredMixin:
    def _on_preferred_election_request(self: Controller, ev: PreferredElectionRequest) -> None:
        if not ev.present:
            return  # no znode: nothing asked, nothing to delete (a DeleteOp would fail NoNode)
        ctx = self.ctx
        plan = Plan()
        alive = set(ctx.live)
        eligible = ctx.eligible()
        for key in sorted(ev.partitions, key=repr):
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            if tp is None:
                self._reject(key, "preferred election of an unknown partition")
            elif tp[0] in ctx.to_delete:
                self._log("info", tp, "", "", "preferred election skipped: topic being deleted")
            elif tp in ctx.states:
                self._plan_decision(plan, tp, PREFERRED, 0, alive, eligible)
        plan.ops.append(DeleteOp(zk_paths.PREFERRED_REPLICA_ELECTION))
        self._run(plan)

    def imbalance(self: Controller) -> dict[int, float]:
        """Per preferred broker: the share of its preferred partitions led by another."""
        total: dict[int, int] = {}
        off: dict[int, int] = {}
        ctx = self.ctx
        for tp, replicas in ctx.assignment.items():
            st = ctx.states.get(tp)
            if st is None or tp[0] in ctx.to_delete or tp in ctx.reassignments:
                continue
            p = replicas[0]
            total[p] = total.get(p, 0) + 1
            if st.leader_and_isr.leader != p:
                off[p] = off.get(p, 0) + 1
        return {b: off.get(b, 0) / n for b, n in sorted(total.items())}

    def _on_auto_rebalance(self: Controller) -> None:
        if not self.config.auto_leader_rebalance_enable:
            return
        self._effects.append(StartTimer(TimerKind.AUTO_REBALANCE,
                                        self.config.leader_imbalance_check_interval_ms))
        ctx = self.ctx
        threshold = self.config.leader_imbalance_per_broker_percentage / 100
        eligible = ctx.eligible()
        brokers = {b for b, ratio in self.imbalance().items() if ratio > threshold and b in eligible}
        plan = Plan()
        if brokers:
            alive = set(ctx.live)
            for tp in sorted(ctx.assignment):
                replicas = ctx.assignment[tp]
                if replicas[0] in brokers and tp[0] not in ctx.to_delete \
                        and tp not in ctx.reassignments and tp in ctx.states:
                    self._plan_decision(plan, tp, PREFERRED, 0, alive, eligible)
        self._run(plan)
