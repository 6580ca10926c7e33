"""Broker membership: join, failure, bounce (``BrokerChange``) and controlled shutdown.

A ``BrokerChange`` names every registered broker with its epoch (the czxid of
``/brokers/ids/<id>``). A known id with a new epoch is a *bounced* broker: a failure of
the old incarnation followed by a join of the new one, in one round.

* failure: replicas on it -> OfflineReplica (deletion in progress -> Ineligible);
  partitions it led -> OfflinePartition and re-elected from the live ISR; it leaves
  every ISR but the last member is kept (leader -1 when no ISR member is live); leader
  epoch + 1; its channel is removed.
* join: full LeaderAndIsr and UpdateMetadata to it, UpdateMetadata (live set) to all,
  its replicas -> OnlineReplica, leaders for Offline/New partitions, deletions retried.
* controlled shutdown: the broker-epoch check (``_check_broker_epoch``), then leaders
  moved off it and it leaves the ISRs of partitions it follows (StopReplica delete=false
  to it for those); the reply is produced from the WriteResult round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.controller.plan import Plan
from fsm.controller.records import OFFLINE, SHUTDOWN
from fsm.effects import RemoveBrokerChannel, ReplyControlledShutdown
from fsm.errors import ErrorCode
from fsm.events import BrokerChange, ControlledShutdown
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.requests import ControlledShutdownResponse
from fsm.values import BrokerInfo

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_P = PartitionState
_R = ReplicaState


class BrokersMixin:
    # ------------------------------------------------------------------ BrokerChange

    def _on_broker_change(self: Controller, ev: BrokerChange) -> None:
        ids = [getattr(b, "broker_id", None) for b in ev.live]
        if not all(isinstance(b, BrokerInfo) for b in ev.live) \
                or any(not isinstance(i, int) or i < 0 for i in ids):
            self._reject(None, f"BrokerChange with a malformed or negative broker id: {ids}")
            return
        if len(set(ids)) != len(ids):
            self._reject(None, f"BrokerChange names a broker twice: {ids}")
            return
        ctx = self.ctx
        new = {b.broker_id: b for b in ev.live}
        old = ctx.live
        dead = {b for b in old if b not in new}
        bounced = {b for b in old if b in new and new[b].epoch != old[b].epoch}
        joined = {b for b in new if b not in old} | bounced
        if not dead and not joined:
            if new != old:
                ctx.live = new
                plan = Plan()
                plan.followups.append(("um-everyone",))
                self._run(plan)
            return
        plan = Plan()
        failed = dead | bounced
        if failed:
            ctx.live = {b: i for b, i in old.items() if b not in failed}
            ctx.shutting_down -= failed
            self._log("info", None, "", "", f"brokers failed: {sorted(dead)}, "
                      f"bounced: {sorted(bounced)}")
            self._on_brokers_failed(plan, failed)
        ctx.live = new
        for b in sorted(dead):
            self._effects.append(RemoveBrokerChannel(b))
        if joined:
            self._log("info", None, "", "", f"brokers joined: {sorted(joined)}")
            self._on_brokers_joined(plan, joined)
        plan.followups.append(("um-everyone",))
        self._run(plan)

    def _on_brokers_failed(self: Controller, plan: Plan, failed: set[int]) -> None:
        ctx = self.ctx
        alive = set(ctx.live)
        eligible = ctx.eligible()
        to_delete = ctx.to_delete
        states = ctx.states
        set_replica = self._set_replica_state
        for tp, replicas in ctx.assignment.items():
            if failed.isdisjoint(replicas):
                continue
            deleting = tp[0] in to_delete
            for b in replicas:
                if b not in failed:
                    continue
                cur = ctx.replica_state(tp, b)
                if cur is _R.ReplicaDeletionStarted:
                    set_replica(tp, b, _R.ReplicaDeletionIneligible, "broker failed")
                elif cur is not _R.OfflineReplica and cur is not _R.ReplicaDeletionSuccessful:
                    set_replica(tp, b, _R.OfflineReplica, "broker failed")
                if deleting and cur is not _R.ReplicaDeletionSuccessful:
                    ctx.ineligible.add(tp[0])
            st = states.get(tp)
            if st is None or deleting:
                continue
            li = st.leader_and_isr
            if li.leader in failed:
                if ctx.partition_state.get(tp) is not _P.OfflinePartition:
                    self._set_partition_state(tp, _P.OfflinePartition, "leader failed")
                self._plan_decision(plan, tp, OFFLINE, 0, alive, eligible)
            elif not failed.isdisjoint(li.isr):
                self._plan_decision(plan, tp, OFFLINE, 0, alive, eligible)

    def _on_brokers_joined(self: Controller, plan: Plan, joined: set[int]) -> None:
        ctx = self.ctx
        to_delete = ctx.to_delete
        for tp, replicas in ctx.assignment.items():
            if joined.isdisjoint(replicas) or tp[0] in to_delete:
                continue
            for b in replicas:
                if b in joined:
                    cur = ctx.replica_state(tp, b)
                    if cur in (_R.OfflineReplica, _R.NewReplica, _R.ReplicaDeletionIneligible):
                        self._set_replica_state(tp, b, _R.OnlineReplica, "broker joined")
        for b in sorted(joined):
            plan.followups.append(("join", b))
        self._plan_elections(plan, set(ctx.live), ctx.eligible())
        self._retry_ineligible_deletions()

    # ------------------------------------------------------------------ controlled shutdown

    def _check_broker_epoch(self: Controller, broker_id: int, epoch: int) -> ErrorCode:
        """KIP-380: a request from another incarnation of a broker is stale."""
        info = self.ctx.live.get(broker_id)
        if info is None:
            return ErrorCode.BROKER_NOT_AVAILABLE
        if info.epoch != epoch:
            return ErrorCode.STALE_BROKER_EPOCH
        return ErrorCode.NONE

    def _on_controlled_shutdown(self: Controller, ev: ControlledShutdown) -> None:
        b = ev.request.broker_id
        if not (self._active and self._loaded):
            self._effects.append(ReplyControlledShutdown(
                b, ev.correlation, ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)))
            return
        error = self._check_broker_epoch(b, ev.request.broker_epoch)
        if error is not ErrorCode.NONE:
            self._reject(b, f"controlled shutdown of broker {b} epoch "
                         f"{ev.request.broker_epoch}: {error.name}")
            self._effects.append(ReplyControlledShutdown(
                b, ev.correlation, ControlledShutdownResponse(error)))
            return
        ctx = self.ctx
        ctx.shutting_down.add(b)
        alive = set(ctx.live)
        eligible = ctx.eligible()
        plan = Plan()
        for tp, replicas in sorted(ctx.assignment.items()):
            if b not in replicas or tp[0] in ctx.to_delete:
                continue
            st = ctx.states.get(tp)
            if st is None:
                continue
            if st.leader_and_isr.leader == b:
                if len(replicas) > 1:
                    self._plan_decision(plan, tp, SHUTDOWN, b, alive, eligible)
            else:
                self._plan_decision(plan, tp, SHUTDOWN, b, alive, eligible)
                if ctx.replica_state(tp, b) is not _R.OfflineReplica:
                    self._set_replica_state(tp, b, _R.OfflineReplica, "controlled shutdown")
                plan.followups.append(("stop", b, tp, False))
        plan.followups.append(("reply", b, ev.correlation))
        self._run(plan)
