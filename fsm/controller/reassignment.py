"""Partition reassignment (seed 000, Kafka's KIP-455-era controller).

A reassignment starts when (1) its topic is not being deleted, (2) the partition is not
already being reassigned, (3) the target differs from the current replica list; targets
naming an unknown partition, an empty or duplicate replica list or a broker that is not
live are rejected. Reassignments in flight are hard state: ``/admin/reassign_partitions``
keeps them, and ``ClusterLoaded`` resumes them after a failover.

* expand (target not all assigned): RS = target + (old - target), written to the topic
  znode (v2 ``adding``/``removing`` fields); once committed RS in memory, then (next
  round) leader epoch + 1; once that committed added replicas NewReplica, LeaderAndIsr to
  every replica of RS.
* wait until every target replica is in the ISR. We learn ISR changes from the
  ``IsrChangeNotification`` events (the partition states they carry), deliberately
  instead of a per-partition watch on the state znode: leaders always announce ISR
  changes there, and it keeps the number of watches constant.
* contract: leader moved to a target replica if needed (ReassignedPartitionLeaderSelector),
  ISR = ISR ∩ target, leader epoch + 1 (one state write); only once it committed:
  replicas leaving: OfflineReplica (StopReplica delete=false) -> ReplicaDeletionStarted
  (StopReplica delete=true) -> Successful -> NonExistent; added replicas OnlineReplica;
  assignment = target in memory; then (next round, from that WriteResult) topic znode =
  target and the partition leaves ``/admin/reassign_partitions`` (rewritten with the
  rest, deleted when empty). A completion whose state write fails (BadVersion: the
  leader changed the ISR meanwhile) is decided once more on the re-read state, then left
  in flight until the next ISR change notification -- never half written (a phase is not
  owed like other decisions, ``Controller._owe``: the follow-on rounds plan it again).

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
from fsm.values import TopicAssignment, TopicPartition
from fsm.znodes import ReassignmentZnode

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_R = ReplicaState
_ADDING = (_R.NonExistentReplica, _R.NewReplica)
_REMOVED = (_R.ReplicaDeletionStarted, _R.ReplicaDeletionSuccessful, _R.NonExistentReplica)
"""A removed replica's moves after OfflineReplica (it is gone at once: StopReplica deletes it)."""


class ReassignmentMixin:
    def _on_reassignment_request(self: Controller, ev: ReassignmentRequest) -> None:
        if not ev.present:
            return  # no znode: nothing asked, nothing to rewrite
        ctx = self.ctx
        accepted = False
        # entries to remove from /admin/reassign_partitions; a znode with no entries at all is
        # rewritten from memory too (deleted when nothing is in flight), not left behind
        dropped = not ev.targets
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

    def _topic_znode(self: Controller, topic: str,
                     planned: dict | None = None) -> TopicAssignment:
        """The topic znode as memory holds it, with ``planned`` replica lists (an expansion
        about to be written) instead of the assigned ones. ``adding``: target replicas not
        started (NonExistent: the epoch bump has not committed yet) or not in sync (New)."""
        ctx = self.ctx
        parts, adding, removing = [], [], []
        for tp in ctx.topics[topic]:
            replicas = (planned or {}).get(tp) or ctx.assignment[tp]
            parts.append((tp[1], replicas))
            target = ctx.reassignments.get(tp)
            if target is not None and set(target) <= set(replicas):
                adding.append((tp[1], tuple(
                    b for b in target if ctx.replica_state(tp, b) in _ADDING)))
                removing.append((tp[1], tuple(b for b in replicas if b not in target)))
        return TopicAssignment(tuple(parts), tuple(adding), tuple(removing))

    def _plan_reassignment_progress(self: Controller, plan: Plan) -> None:
        """Each phase writes ZooKeeper before memory moves (Kafka's order), one round each:

        1. expand: the topic znode with RS = target + (old - target); followup
           ``("expand", tp, rs)`` takes RS into memory once that op committed;
        2. the leader-epoch bump (REASSIGN_EPOCH) with the conditional followup
           ``("expanded", tp)``: once the state write committed, the added replicas (still
           NonExistentReplica until then) -> NewReplica, LeaderAndIsr to RS;
        3. (all target replicas in the ISR) the completion state write (REASSIGN_DONE: ISR
           within the target, leader in it, epoch + 1) with the conditional followup
           ``("complete", tp)``: only once that write committed does memory switch
           (replica transitions, StopReplica, assignment = target), and the next round
           writes the topic znode and ``/admin/reassign_partitions``.

        A state write that fails with BadVersion is decided once more from the failure's
        data (carrying its conditional followup); when that fails too -- or nothing can be
        decided on the re-read state -- the partition stays in flight, untouched in memory
        and in ZooKeeper, and is tried again on the next ISR change notification."""
        ctx = self.ctx
        if not ctx.reassignments:
            return
        alive = set(ctx.live)
        eligible = ctx.eligible()
        expanding: dict[str, dict] = {}
        held = self._held
        for tp in sorted(ctx.reassignments):
            target = ctx.reassignments[tp]
            replicas = ctx.assignment[tp]
            if tp not in ctx.states or tp[0] in ctx.to_delete or tp in held:
                continue
            if not set(target) <= set(replicas):
                rs = ctx.intern(target + tuple(b for b in replicas if b not in target))
                expanding.setdefault(tp[0], {})[tp] = rs
                plan.followups.append(("expand", tp, rs))
                continue
            if any(ctx.replica_state(tp, b) is _R.NonExistentReplica for b in target):
                if self._plan_decision(plan, tp, REASSIGN_EPOCH, 0, alive, eligible):
                    plan.followups.append(("expanded", tp))
                continue
            if not set(target) <= set(self._current(plan, tp).isr):
                continue  # wait for the new replicas to join the ISR
            if self._plan_decision(plan, tp, REASSIGN_DONE, 0, alive, eligible, target):
                plan.followups.append(("complete", tp))
            # else no live target replica in the ISR can lead yet
        for t in sorted(expanding):
            plan.ops.append(SetDataOp(zk_paths.topic(t), self._topic_znode(t, expanding[t]), -1))

    def _reassignment_expanded(self: Controller, tp: TopicPartition, rs: tuple[int, ...]) -> None:
        """The topic znode with RS committed: RS in memory (added replicas stay
        NonExistentReplica until the leader-epoch bump committed)."""
        ctx = self.ctx
        if tp in ctx.reassignments and tp in ctx.assignment:
            ctx.assignment[tp] = rs

    def _reassignment_started(self: Controller, tp: TopicPartition) -> None:
        """The leader-epoch bump committed: the added replicas are NewReplica."""
        ctx = self.ctx
        self._move_replicas([(tp, b, _R.NewReplica) for b in ctx.reassignments.get(tp, ())
                             if ctx.replica_state(tp, b) is _R.NonExistentReplica],
                            "reassignment: added")

    def _reassignment_completed(self: Controller, tp: TopicPartition) -> str | None:
        """The completion state write committed: memory switches to the target; StopReplica
        to the removed replicas. Returns the topic whose znode must be rewritten."""
        ctx = self.ctx
        target = ctx.reassignments.get(tp)
        replicas = ctx.assignment.get(tp)
        if target is None or replicas is None:
            return None
        alive = ctx.live
        self._move_replicas([(tp, b, _R.OnlineReplica) for b in target
                             if ctx.replica_state(tp, b) is _R.NewReplica and b in alive],
                            "reassignment: in sync")
        removed = [b for b in replicas if b not in target]
        self._move_replicas([(tp, b, _R.OfflineReplica) for b in removed
                             if ctx.replica_state(tp, b) is not _R.OfflineReplica],
                            "reassignment: removed")
        self._move_replicas([(tp, b, state) for state in _REMOVED for b in removed],
                            "reassignment: removed")
        for b in removed:
            if b in alive:
                self._batch.stop_replica(b, tp, False)
                self._batch.stop_replica(b, tp, True)
        ctx.assignment[tp] = target
        del ctx.reassignments[tp]
        self._log("info", tp, "", str(list(target)), "reassignment completed")
        return tp[0]
