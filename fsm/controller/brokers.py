"""Broker membership: join, failure, bounce (``BrokerChange``) and controlled shutdown.

A ``BrokerChange`` names every registered broker with its epoch (the czxid of
``/brokers/ids/<id>``). A known id with a new epoch is a *bounced* broker: a failure of
the old incarnation followed by a join of the new one, in one round.

Channels (seed 003): every failed broker -- dead *or bounced* -- gets
``RemoveBrokerChannel(id)`` so the channel manager drops the old incarnation's queue.
Ordering in the effect list of the ``handle(BrokerChange)`` call: the
``RemoveBrokerChannel`` effects (sorted by id) come before any ``SendRequest`` (requests
are appended by ``handle`` after the handler's effects, and those to the new incarnation
of a bounced broker mostly come later still, from the ``WriteResult`` round), and before
the ``ZkWrite``; so a bounced broker's channel is removed, then re-created by its first
request, stamped with its new epoch.

* failure: replicas on it -> OfflineReplica (deletion in progress -> Ineligible);
  partitions it led -> OfflinePartition and re-elected from the live ISR; it leaves
  every ISR but the last member is kept (leader -1 when no ISR member is live -- or,
  with unclean leader election, the first live eligible replica with ISR = [it]); leader
  epoch + 1; its channel is removed. When brokers also join in the same round (a bounce
  is both), the failure half takes no unclean last resort: the join half elects the
  Offline partitions again with the whole live set, so a bounced broker that was the
  ISR's last live member leads again, cleanly, instead of losing its records to a replica
  outside the ISR (found by ``unclean_election_only_as_last_resort``).
* join: full LeaderAndIsr and UpdateMetadata to it, UpdateMetadata (live set) to all,
  its replicas -> OnlineReplica, leaders for Offline/New partitions, deletions retried.
* controlled shutdown: the broker-epoch check (``_check_broker_epoch``), then leaders
  moved off it and it leaves the ISRs of partitions it follows (StopReplica delete=false
  to it for those); the reply is produced from the WriteResult round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.controller.leader_selection import decide
from fsm.controller.plan import Plan
from fsm.controller.records import OFFLINE, SHUTDOWN, Decision, new_record
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
_OFFLINE = _P.OfflinePartition
_NON_EXISTENT_REPLICA = _R.NonExistentReplica


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
            # with brokers joining in the same round (a bounce is both), the failure half
            # takes no unclean last resort: the join half elects every Offline partition
            # again with the whole live set, so a bounced ISR member leads again, cleanly
            self._on_brokers_failed(plan, failed, unclean=not joined and
                                    self.config.unclean_leader_election_enable)
        ctx.live = new
        for b in sorted(failed):  # dead and bounced: before any request (see above)
            self._effects.append(RemoveBrokerChannel(b))
        if joined:
            self._log("info", None, "", "", f"brokers joined: {sorted(joined)}")
            self._on_brokers_joined(plan, joined)
        plan.followups.append(("um-everyone",))
        self._run(plan)

    def _on_brokers_failed(self: Controller, plan: Plan, failed: set[int],
                           unclean: bool) -> None:
        """Bulk path (a broker in 50,000 replica sets): per partition only dict and tuple
        operations; the replica and partition moves go through ``_move_replicas`` /
        ``_move_partitions`` in one batch each (checked against the tables, logged one
        record per group of identical transitions). ``unclean``: whether a partition with no
        live ISR member may elect outside the ISR here (see ``_on_broker_change``)."""
        ctx = self.ctx
        alive = set(ctx.live)
        eligible = ctx.eligible()
        to_delete = ctx.to_delete
        states = ctx.states
        pstate = ctx.partition_state
        rstates = ctx.replica_states
        plan_decision = self._plan_decision
        writes = plan.writes
        epoch = self._epoch
        replicas_after = self._replicas_after_failure
        rmoves: list = []  # (tp, broker, target)
        pmoves: list = []  # (tp, OfflinePartition)
        memo: dict[tuple[int, int], tuple] = {}  # (id(states), id(replicas)) -> outcome
        for tp, replicas in ctx.assignment.items():
            if failed.isdisjoint(replicas):
                continue
            rs = rstates.get(tp, ())
            hit = memo.get((id(rs), id(replicas)))
            if hit is None or hit[0] is not rs or hit[1] is not replicas:
                hit = memo[(id(rs), id(replicas))] = replicas_after(rs, replicas, failed)
            _, _, moves, not_deleted = hit
            for b, target in moves:
                rmoves.append((tp, b, target))
            if tp[0] in to_delete:
                if not_deleted:
                    ctx.ineligible.add(tp[0])
                continue
            st = states.get(tp)
            if st is None:
                continue
            li = st.leader_and_isr
            if li.leader in failed:
                if pstate.get(tp) is not _OFFLINE:
                    pmoves.append((tp, _OFFLINE))
            elif failed.isdisjoint(li.isr):
                continue
            if tp in writes:
                plan_decision(plan, tp, OFFLINE, 0, alive, eligible, unclean=unclean)
            else:  # _plan_decision inlined for a partition with a state and no planned write
                new = decide(OFFLINE, 0, replicas, li, alive, eligible, unclean, epoch)
                if new is not None:
                    writes[tp] = new_record(Decision, (OFFLINE, 0, new, st.version, False))
        self._move_replicas(rmoves, "broker failed")
        self._move_partitions(pmoves, "leader failed")

    @staticmethod
    def _replicas_after_failure(rs: tuple, replicas: tuple[int, ...], failed: set[int]) -> tuple:
        """What a failure does to the replicas of one partition whose replica states are
        ``rs``: ``(rs, replicas, moves, not_deleted)``; ``moves`` lists ``(broker, target)``
        in replica order: a replica DeletionStarted -> DeletionIneligible, others (not
        NonExistent, Offline or DeletionSuccessful) -> Offline; ``not_deleted``: a failed
        replica not DeletionSuccessful."""
        moves = []
        not_deleted = False
        for b in replicas:
            if b not in failed:
                continue
            cur = _NON_EXISTENT_REPLICA
            for x, s in rs:
                if x == b:
                    cur = s
                    break
            if cur is _NON_EXISTENT_REPLICA:
                continue  # a reassignment's added replica not started yet: nothing to stop
            if cur is _R.ReplicaDeletionStarted:
                moves.append((b, _R.ReplicaDeletionIneligible))
            elif cur is not _R.OfflineReplica and cur is not _R.ReplicaDeletionSuccessful:
                moves.append((b, _R.OfflineReplica))
            if cur is not _R.ReplicaDeletionSuccessful:
                not_deleted = True
        return (rs, replicas, tuple(moves), not_deleted)

    def _on_brokers_joined(self: Controller, plan: Plan, joined: set[int]) -> None:
        """Every replica on a joined broker goes OnlineReplica -- those of topics queued for
        deletion too, as Kafka's ``onBrokerStartup`` does (a deletion that stopped on this
        broker is then resumed: ``_retry_ineligible_deletions``, and the follow-on round
        moves the replica Online -> Offline -> DeletionStarted)."""
        ctx = self.ctx
        moves = []
        for tp, replicas in ctx.assignment.items():
            if joined.isdisjoint(replicas):
                continue
            for b in replicas:
                if b in joined:
                    cur = ctx.replica_state(tp, b)
                    if cur in (_R.OfflineReplica, _R.NewReplica, _R.ReplicaDeletionIneligible):
                        moves.append((tp, b, _R.OnlineReplica))
        self._move_replicas(moves, "broker joined")
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
        offline = []  # the replicas it follows: -> OfflineReplica
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
                    offline.append((tp, b, _R.OfflineReplica))
                plan.followups.append(("stop", b, tp, False))
        self._move_replicas(offline, "controlled shutdown")
        plan.followups.append(("reply", b, ev.correlation))
        self._run(plan)
