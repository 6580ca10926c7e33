"""Topic creation (``TopicChange``) and partition expansion (``PartitionModification``).

New partitions: NonExistent -> NewPartition, replicas -> NewReplica, then the INIT
decision (leader = first live replica, ISR = live replicas, leader epoch 0) written as a
``CreateOp(make_parents=True)`` of the state znode (the topic's creator writes only
``/brokers/topics/<t>``); on commit OnlinePartition, live replicas OnlineReplica,
LeaderAndIsr to the replicas and UpdateMetadata to all. With no live replica the
partition stays New until a broker joins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.controller.plan import Plan
from fsm.controller.records import INIT
from fsm.controller.validation import assignment_problem, topic_name_problem
from fsm.events import PartitionModification, TopicChange
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.values import TopicAssignment

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_P = PartitionState
_R = ReplicaState


class TopicsMixin:
    def _on_topic_change(self: Controller, ev: TopicChange) -> None:
        ctx = self.ctx
        plan = Plan()
        seen: set[str] = set()
        for name, assignment in sorted(ev.new, key=lambda x: str(x[0])):
            if name in ctx.topics:
                continue
            problem = topic_name_problem(name) or ("listed twice" if name in seen else None) \
                or (assignment_problem(assignment) if isinstance(assignment, TopicAssignment)
                    else "not an assignment")
            if problem:
                self._reject(name, f"new topic {name!r}: {problem}")
                continue
            seen.add(name)
            self._create_partitions(plan, name, assignment, 0)
        for name in sorted(set(ctx.topics) - set(ev.names) - seen):
            if name not in ctx.to_delete:
                self._log("info", name, "", "", "topic znode vanished: forgotten")
                self._forget_topic(name, "topic znode vanished")
        self._run(plan)

    def _on_partition_modification(self: Controller, ev: PartitionModification) -> None:
        ctx = self.ctx
        existing = ctx.topics.get(ev.topic)
        if existing is None:
            self._reject(ev.topic, "partition modification of an unknown topic")
            return
        if ev.topic in ctx.to_delete:
            self._log("info", ev.topic, "", "", "partition modification ignored: being deleted")
            return
        if not isinstance(ev.assignment, TopicAssignment):
            self._reject(ev.topic, "partition modification without an assignment")
            return
        n_old, n_new = len(existing), len(ev.assignment.partitions)
        problem = assignment_problem(ev.assignment, first_new=n_old)
        if problem is None and n_new < n_old:
            problem = f"partitions cannot be removed ({n_old} -> {n_new})"
        if problem:
            self._reject(ev.topic, f"partition modification: {problem}")
            return
        if n_new == n_old:
            return  # our own reassignment write, or a no-op
        plan = Plan()
        self._create_partitions(plan, ev.topic, ev.assignment, n_old)
        self._run(plan)

    def _create_partitions(self: Controller, plan: Plan, name: str,
                           assignment: TopicAssignment, first: int) -> None:
        ctx = self.ctx
        parts = assignment.as_dict()
        tps = ctx.topics.get(name, ()) + tuple((name, p) for p in range(first, len(parts)))
        ctx.topics[name] = tps
        alive = set(ctx.live)
        eligible = ctx.eligible()
        new = tps[first:]
        for tp in new:
            ctx.assignment[tp] = ctx.intern(tuple(parts[tp[1]]))
        self._move_partitions([(tp, _P.NewPartition) for tp in new], "partition created")
        self._move_replicas([(tp, b, _R.NewReplica) for tp in new for b in ctx.assignment[tp]],
                            "partition created")
        for tp in new:
            self._plan_decision(plan, tp, INIT, 0, alive, eligible)

    def _forget_topic(self: Controller, name: str, reason: str) -> None:
        """Drop a topic from memory without a deletion (Kafka's ``removeTopic``): its
        replicas and partitions leave memory through the setters' ``load`` mode -- not
        transitions: the table has no way from Online to NonExistent but the deletion's."""
        ctx = self.ctx
        tps = ctx.topics.get(name, ())
        self._move_replicas([(tp, b, _R.NonExistentReplica) for tp in tps
                             for b, _s in ctx.replica_states.get(tp, ())], reason, load=True)
        self._move_partitions([(tp, _P.NonExistentPartition) for tp in tps
                               if tp in ctx.partition_state], reason, load=True)
        ctx.remove_topic(name)
