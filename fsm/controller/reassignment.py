"""Partition reassignment (seed 000, Kafka's KIP-455-era controller).

A reassignment starts when (1) its topic is not being deleted, (2) the partition is not
already being reassigned, (3) the target differs from the current replica list; targets
naming an unknown partition, an empty or duplicate replica list or a broker that is not
live are rejected. Reassignments in flight are hard state: ``/admin/reassign_partitions``
keeps them, and ``ClusterLoaded`` resumes them after a failover.

* expand (target not all assigned): RS = target + (old - target), written to the topic
  znode (v2 ``adding``/``removing`` fields), added replicas NewReplica, leader epoch + 1,
  LeaderAndIsr to every replica of RS.
* wait until every target replica is in the ISR. We learn ISR changes from the
  ``IsrChangeNotification`` events (the partition states they carry), deliberately
  instead of a per-partition watch on the state znode: leaders always announce ISR
  changes there, and it keeps the number of watches constant.
* contract: leader moved to a target replica if needed (ReassignedPartitionLeaderSelector),
  ISR = ISR ∩ target, leader epoch + 1; replicas leaving: OfflineReplica (StopReplica
  delete=false) -> ReplicaDeletionStarted (StopReplica delete=true) -> Successful ->
  NonExistent; added replicas OnlineReplica; topic znode = target; the partition leaves
  ``/admin/reassign_partitions`` (rewritten with the rest, deleted when empty).

Entries that do not start -- rejected (malformed, unknown partition, bad replica list,
broker not live, topic being deleted) or already done (target = current replicas) -- are
removed from ``/admin/reassign_partitions`` as Kafka does: the znode is rewritten with
the reassignments in flight, or deleted when none remain (one ``ZkWrite``; the follow-on
``ReassignmentRequest`` it triggers names only reassignments in flight, so no loop).
Entries for a partition already being reassigned are ignored (the one in flight stays).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.plan import Plan
from fsm.controller.records import REASSIGN_DONE, REASSIGN_EPOCH
from fsm.controller.validation import replicas_problem
from fsm.effects import DeleteOp, SetDataOp, ZkOp
from fsm.events import ReassignmentRequest
from fsm.replica_states import ReplicaState
from fsm.values import TopicAssignment
from fsm.znodes import ReassignmentZnode

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_R = ReplicaState


class ReassignmentMixin:
    def _on_reassignment_request(self: Controller, ev: ReassignmentRequest) -> None:
        ctx = self.ctx
        accepted = False
        dropped = False  # entries to remove from /admin/reassign_partitions
        for entry in ev.targets:
            if not (isinstance(entry, tuple) and len(entry) == 2):
                self._reject(None, f"reassignment: malformed entry {entry!r}")
                dropped = True
                continue
            key, target = entry
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            target = tuple(target) if isinstance(target, tuple | list) else ()
            if tp is None:
                self._reject(key, "reassignment of an unknown partition")
                dropped = True
                continue
            problem = replicas_problem(target)
            if problem is None and tp[0] in ctx.to_delete:
                problem = "topic is being deleted"
            if problem is None:
                unknown = [b for b in target if b not in ctx.live]
                if unknown:
                    problem = f"target names brokers that are not live: {unknown}"
            if problem:
                self._reject(tp, f"reassignment: {problem}")
                dropped = True
                continue
            if tp in ctx.reassignments:
                self._log("info", tp, "", "", "already being reassigned")
                continue
            if target == ctx.assignment[tp]:
                self._log("info", tp, "", "", "target equals the current replicas")
                dropped = True
                continue
            ctx.reassignments[tp] = ctx.intern(target)
            self._log("info", tp, str(list(ctx.assignment[tp])), str(list(target)),
                      "reassignment started")
            accepted = True
        plan = Plan()
        if dropped:
            plan.ops.append(self._reassignment_znode_op())
        if accepted or dropped:
            self._run(plan)

    def _reassignment_znode_op(self: Controller) -> ZkOp:
        rest = self.ctx.reassignments
        if not rest:
            return DeleteOp(zk_paths.REASSIGN_PARTITIONS)
        return SetDataOp(zk_paths.REASSIGN_PARTITIONS,
                         ReassignmentZnode(tuple(sorted(rest.items()))), -1)

    def _topic_znode(self: Controller, topic: str) -> TopicAssignment:
        ctx = self.ctx
        parts, adding, removing = [], [], []
        for tp in ctx.topics[topic]:
            replicas = ctx.assignment[tp]
            parts.append((tp[1], replicas))
            target = ctx.reassignments.get(tp)
            if target is not None and set(target) <= set(replicas):
                adding.append((tp[1], tuple(
                    b for b in target if ctx.replica_state(tp, b) is _R.NewReplica)))
                removing.append((tp[1], tuple(b for b in replicas if b not in target)))
        return TopicAssignment(tuple(parts), tuple(adding), tuple(removing))

    def _plan_reassignment_progress(self: Controller, plan: Plan) -> None:
        ctx = self.ctx
        if not ctx.reassignments:
            return
        alive = set(ctx.live)
        eligible = ctx.eligible()
        touched: set[str] = set()
        done = False
        for tp in sorted(ctx.reassignments):
            target = ctx.reassignments[tp]
            replicas = ctx.assignment[tp]
            if tp not in ctx.states or tp[0] in ctx.to_delete:
                continue
            if not set(target) <= set(replicas):
                # expand: RS = target + (old - target)
                rs = ctx.intern(target + tuple(b for b in replicas if b not in target))
                ctx.assignment[tp] = rs
                for b in target:
                    if b not in replicas:
                        self._set_replica_state(tp, b, _R.NewReplica, "reassignment: added")
                self._plan_decision(plan, tp, REASSIGN_EPOCH, 0, alive, eligible)
                touched.add(tp[0])
                continue
            if not set(target) <= set(self._current(plan, tp).isr):
                continue  # wait for the new replicas to join the ISR
            if not self._plan_decision(plan, tp, REASSIGN_DONE, 0, alive, eligible, target):
                continue  # no live target replica in the ISR can lead yet
            for b in target:
                if ctx.replica_state(tp, b) is _R.NewReplica and b in alive:
                    self._set_replica_state(tp, b, _R.OnlineReplica, "reassignment: in sync")
            for b in replicas:
                if b in target:
                    continue
                if ctx.replica_state(tp, b) is not _R.OfflineReplica:
                    self._set_replica_state(tp, b, _R.OfflineReplica, "reassignment: removed")
                self._set_replica_state(tp, b, _R.ReplicaDeletionStarted, "reassignment: removed")
                if b in alive:
                    plan.followups.append(("stop", b, tp, False))
                    plan.followups.append(("stop", b, tp, True))
                self._set_replica_state(tp, b, _R.ReplicaDeletionSuccessful,
                                        "reassignment: removed")
                self._set_replica_state(tp, b, _R.NonExistentReplica, "reassignment: removed")
            ctx.assignment[tp] = target
            del ctx.reassignments[tp]
            self._log("info", tp, "", str(list(target)), "reassignment completed")
            touched.add(tp[0])
            done = True
        for t in sorted(touched):
            plan.ops.append(SetDataOp(zk_paths.topic(t), self._topic_znode(t), -1))
        if done:
            plan.ops.append(self._reassignment_znode_op())
            for t in list(ctx.ineligible):
                if not any(tp in ctx.reassignments for tp in ctx.topics.get(t, ())):
                    pass  # retried by the timer / a join, like any ineligible topic
