"""Topic deletion (seed 000's TopicDeletionManager), and the controller's timers.

``/admin/delete_topics/<t>`` children queue topics. A topic is *ineligible* while one of
its partitions is being reassigned or one of its replicas is on a dead broker (or a
deleting StopReplica failed). An eligible topic starts deletion: UpdateMetadata with
leader -2 for its partitions; every replica OfflineReplica (StopReplica delete=false) ->
ReplicaDeletionStarted (StopReplica delete=true). Answers to the deleting StopReplica
(``BrokerResponseReceived``) move replicas to ReplicaDeletionSuccessful or
ReplicaDeletionIneligible. When all are Successful: replicas NonExistent, partitions
Offline -> NonExistent, and one write deletes ``/brokers/topics/<t>`` (recursively) and
``/admin/delete_topics/<t>``. Ineligible replicas are retried (-> OfflineReplica) by the
DELETION_RETRY timer and by broker joins. A request for an unknown topic only deletes
its admin znode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.plan import Plan
from fsm.controller.validation import topic_name_problem
from fsm.effects import DeleteOp, StartTimer
from fsm.errors import ErrorCode
from fsm.events import BrokerResponseReceived, TimerFired, TimerKind, TopicDeletionRequest
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_P = PartitionState
_R = ReplicaState
_STARTABLE = (_R.OnlineReplica, _R.NewReplica, _R.OfflineReplica)


class DeletionMixin:
    def _on_topic_deletion_request(self: Controller, ev: TopicDeletionRequest) -> None:
        ctx = self.ctx
        plan = Plan()
        for t in sorted(ev.topics, key=str):
            problem = topic_name_problem(t)
            if problem:
                self._reject(t, f"deletion request: {problem}")
            elif t not in ctx.topics:
                self._log("info", t, "", "", "deletion of an unknown topic: admin znode removed")
                plan.ops.append(DeleteOp(zk_paths.delete_topic(t)))
            elif not self.config.delete_topic_enable:
                self._log("info", t, "", "", "topic deletion disabled: request removed")
                plan.ops.append(DeleteOp(zk_paths.delete_topic(t)))
            elif t not in ctx.to_delete:
                ctx.to_delete.add(t)
                self._log("info", t, "", "", "queued for deletion")
        self._run(plan)

    def _on_broker_response(self: Controller, ev: BrokerResponseReceived) -> None:
        ctx = self.ctx
        if ev.api != "StopReplica" or ev.delete_partitions is False:
            return
        info = ctx.live.get(ev.broker_id)
        if info is None or info.epoch != ev.broker_epoch:
            self._log("info", ev.broker_id, "", "", "response from a former incarnation ignored")
            return
        b = ev.broker_id
        top_error = ev.response.error
        moves: dict[str, list] = {}  # reason -> moves
        for key, err in ev.response.partition_errors:
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            if tp is None or tp[0] not in ctx.to_delete:
                continue
            if ctx.replica_state(tp, b) is not _R.ReplicaDeletionStarted:
                continue
            if err == ErrorCode.NONE and top_error == ErrorCode.NONE:
                moves.setdefault("replica deleted", []).append(
                    (tp, b, _R.ReplicaDeletionSuccessful))
            else:
                moves.setdefault(f"StopReplica error {ErrorCode(err).name}", []).append(
                    (tp, b, _R.ReplicaDeletionIneligible))
                ctx.ineligible.add(tp[0])
        for reason, batch in moves.items():
            self._move_replicas(batch, reason)
        self._run(Plan())

    def _on_timer(self: Controller, ev: TimerFired) -> None:
        if ev.kind is TimerKind.DELETION_RETRY:
            self._effects.append(StartTimer(TimerKind.DELETION_RETRY,
                                            self.config.deletion_retry_ms))
            self._retry_ineligible_deletions()
            self._run(Plan())
        elif ev.kind is TimerKind.AUTO_REBALANCE:
            self._on_auto_rebalance()

    def _retry_ineligible_deletions(self: Controller) -> None:
        ctx = self.ctx
        for t in sorted(ctx.ineligible):
            self._move_replicas([(tp, b, _R.OfflineReplica) for tp in ctx.topics.get(t, ())
                                 for b, s in ctx.replica_states.get(tp, ())
                                 if s is _R.ReplicaDeletionIneligible], "retry deletion")
            self._log("info", t, "ineligible", "queued", "retry deletion")
        ctx.ineligible.clear()

    def _plan_deletion_progress(self: Controller, plan: Plan) -> None:
        ctx = self.ctx
        for t in sorted(ctx.to_delete):
            tps = ctx.topics.get(t, ())
            pairs = [(tp, b, s) for tp in tps for b, s in ctx.replica_states.get(tp, ())]
            if all(s is _R.ReplicaDeletionSuccessful for _, _, s in pairs):
                self._complete_deletion(plan, t)
                continue
            if t in ctx.ineligible:
                continue
            if any(tp in ctx.reassignments for tp in tps):
                ctx.ineligible.add(t)
                self._log("info", t, "queued", "ineligible", "partitions being reassigned")
                continue
            if any(b not in ctx.live and s is not _R.ReplicaDeletionSuccessful
                   for _, b, s in pairs):
                ctx.ineligible.add(t)
                self._log("info", t, "queued", "ineligible", "replicas offline")
                continue
            start = [(tp, b, s) for tp, b, s in pairs if s in _STARTABLE]
            if not start:
                continue
            self._move_replicas([(tp, b, _R.OfflineReplica) for tp, b, s in start
                                 if s is not _R.OfflineReplica], "topic deletion")
            self._move_replicas([(tp, b, _R.ReplicaDeletionStarted) for tp, b, _s in start],
                                "topic deletion")
            for tp, b, _s in start:
                plan.followups.append(("stop", b, tp, False))
                plan.followups.append(("stop", b, tp, True))
            plan.followups.append(("deleting", t))

    def _complete_deletion(self: Controller, plan: Plan, t: str) -> None:
        ctx = self.ctx
        tps = ctx.topics.get(t, ())
        self._move_replicas([(tp, b, _R.NonExistentReplica) for tp in tps
                             for b, _s in ctx.replica_states.get(tp, ())], "topic deleted")
        pstate = ctx.partition_state
        self._move_partitions([(tp, _P.OfflinePartition) for tp in tps
                               if pstate.get(tp, _P.OfflinePartition) is not _P.OfflinePartition],
                              "topic deleted")
        self._move_partitions([(tp, _P.NonExistentPartition) for tp in tps if tp in pstate],
                              "topic deleted")
        ctx.remove_topic(t)
        self._log("info", t, "deleting", "deleted", "all replicas deleted")
        plan.ops.append(DeleteOp(zk_paths.topic(t), recursive=True))
        plan.ops.append(DeleteOp(zk_paths.delete_topic(t)))
