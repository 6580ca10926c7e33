"""ISR change notifications: partition leaders changed ISRs (conditional on the state
znode version) and wrote ``/isr_change_notification/isr_change_<seq>``. The event carries
the current state of every partition named; the controller adopts newer versions,
announces them (UpdateMetadata to every live broker), checks reassignments waiting for
their new replicas, and deletes the notification znodes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.plan import Plan
from fsm.effects import DeleteOp
from fsm.events import IsrChangeNotification
from fsm.values import LeaderAndIsr, PartitionStateZk

if TYPE_CHECKING:
    from fsm.controller.controller import Controller


class IsrNotificationsMixin:
    def _on_isr_change_notification(self: Controller, ev: IsrChangeNotification) -> None:
        ctx = self.ctx
        plan = Plan()
        for entry in ev.states:
            key, psz = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            if tp is None or not isinstance(psz, PartitionStateZk) \
                    or not isinstance(psz.leader_and_isr, LeaderAndIsr) \
                    or not psz.leader_and_isr.isr:
                self._reject(key, "ISR change for an unknown partition or a malformed state")
                continue
            cur = ctx.states.get(tp)
            if cur is None or psz.version > cur.version:
                li = psz.leader_and_isr
                ctx.states[tp] = PartitionStateZk(
                    LeaderAndIsr(li.leader, li.leader_epoch, ctx.intern(li.isr),
                                 li.controller_epoch), psz.version)
                self._log("isr", tp, "" if cur is None else cur.leader_and_isr, li,
                          f"ISR changed by the leader: {list(li.isr)} (v{psz.version})")
                self._batch.announce(tp)
        for n in sorted(ev.notifications):
            plan.ops.append(DeleteOp(zk_paths.isr_change(n)))
        self._run(plan)
