"""The campaign's admin workload: each planned ``Action`` written with the admin commands'
own functions (``adapters.admin``), and what the campaign expects afterwards.

``Workload.run(action)`` writes the action's znodes and records an ``Operation`` to follow;
``Workload.progress(state)`` marks operations complete as ZooKeeper shows them done:

- create / add partitions: every partition of the topic has a state znode;
- reassign: ``/admin/reassign_partitions`` is gone (its outcome -- the target replicas, or a
  refusal by the controller -- is recorded);
- preferred election: ``/admin/preferred_replica_election`` is gone;
- delete: the topic is gone from ``/brokers/topics`` and ``/admin/delete_topics``.

An operation not complete by its deadline is *stuck*. ``Workload.lost(state)`` lists what the
cluster lost: a topic created (and not deleted) that is no longer in ``/brokers/topics``, a
partition missing from its topic's assignment, or a partition state znode seen once and gone.
A refused admin call (``AdminError``: nothing written) is recorded, not counted as a failure:
the planner cannot know everything the cluster will answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from adapters.admin import elect, reassign, topics
from adapters.admin.errors import AdminError
from adapters.campaign import operations
from adapters.campaign.operations import Operation
from adapters.chaos.plan import Action, ActionKind
from adapters.zookeeper.audit import ZkState


@dataclass
class Workload:
    client: KazooClient
    op_timeout_s: float
    expected: dict[str, int] = field(default_factory=dict)
    """Topic -> partitions it should have (created, not deleted)."""
    seen_states: set[tuple[str, int]] = field(default_factory=set)
    deleting: set[str] = field(default_factory=set)
    pending: list[Operation] = field(default_factory=list)
    done: list[Operation] = field(default_factory=list)
    refused: list[dict[str, object]] = field(default_factory=list)
    actions_by_kind: dict[str, int] = field(default_factory=dict)

    def run(self, step: int, action: Action) -> str:
        """Write the action; returns a short outcome for the progress line."""
        self.actions_by_kind[action.kind.value] = self.actions_by_kind.get(action.kind.value, 0) + 1
        try:
            self._write(action)
        except AdminError as exc:
            self.refused.append({"step": step, "action": action.describe(), "reason": str(exc)})
            return f"refused ({exc.code or 'error'})"
        except (KazooException, KazooTimeoutError) as exc:
            self.refused.append({"step": step, "action": action.describe(),
                                 "reason": f"{type(exc).__name__}"})
            return f"failed ({type(exc).__name__})"
        now = time.monotonic()
        self.pending.append(Operation(step, action, now, now + self.op_timeout_s))
        return "written"

    def _write(self, a: Action) -> None:
        c = self.client
        if a.kind is ActionKind.CREATE:
            assert a.topic is not None
            assignment = dict(enumerate(a.assignment))
            topics.create_topic(c, a.topic, None, len(a.assignment[0]), assignment)
            self.expected[a.topic] = len(a.assignment)
        elif a.kind is ActionKind.ADD_PARTITIONS:
            assert a.topic is not None
            have = self.expected.get(a.topic)
            if have is None:
                raise AdminError(f"topic {a.topic} is not expected to exist")
            new = {have + i: r for i, r in enumerate(a.assignment)}
            topics.add_partitions(c, a.topic, have + len(new), new)
            self.expected[a.topic] = have + len(new)
        elif a.kind is ActionKind.REASSIGN:
            assert a.topic is not None and a.partition is not None
            reassign.execute(c, (((a.topic, a.partition), a.assignment[0]),))
        elif a.kind is ActionKind.ELECT:
            chosen = [t for t in a.topics if t in self.expected]
            parts = elect.select_partitions(c, chosen, [], False) if chosen else ()
            elect.start_election(c, parts)
        else:
            assert a.topic is not None
            topics.delete_topic(c, a.topic)
            self.deleting.add(a.topic)

    # ------------------------------------------------------------------ progress

    def progress(self, state: ZkState) -> None:
        now = time.monotonic()
        for op in self.pending:
            if op.done_at is None:
                finished = self._finished(op, state)
                if finished is not None:
                    op.done_at, op.outcome = now, finished
        for (t, p) in state.partition_states:
            if t in self.expected:
                self.seen_states.add((t, p))
        self.done += [op for op in self.pending if not op.pending]
        self.pending = [op for op in self.pending if op.pending]

    def _finished(self, op: Operation, state: ZkState) -> str | None:
        a = op.action
        if a.kind in (ActionKind.CREATE, ActionKind.ADD_PARTITIONS):
            assert a.topic is not None
            assignment = state.topics.get(a.topic)
            if assignment is None:
                return None
            ids = [p for p, _ in assignment.partitions]
            if all((a.topic, p) in state.partition_states for p in ids):
                return "created"
            return None
        if a.kind is ActionKind.REASSIGN:
            if state.reassignment is not None:
                return None
            assert a.topic is not None and a.partition is not None
            assignment = state.topics.get(a.topic)
            now = dict(assignment.partitions).get(a.partition) if assignment else None
            return "completed" if now == a.assignment[0] else f"not applied (replicas {now})"
        if a.kind is ActionKind.ELECT:
            return None if state.preferred_election is not None else "completed"
        assert a.topic is not None
        if a.topic in state.topic_names or a.topic in state.topics_to_delete:
            return None
        self.expected.pop(a.topic, None)
        self.deleting.discard(a.topic)
        self.seen_states = {tp for tp in self.seen_states if tp[0] != a.topic}
        return "deleted"

    def overdue(self, now: float | None = None) -> list[Operation]:
        return operations.overdue(self.pending, now)

    def give_up(self, ops: list[Operation]) -> list[dict[str, object]]:
        """Report ``ops`` as stuck and stop following them."""
        return operations.give_up(self.pending, ops, self.op_timeout_s)

    # ------------------------------------------------------------------ losses

    def lost(self, state: ZkState) -> list[str]:
        out = []
        for topic, count in sorted(self.expected.items()):
            if topic in self.deleting:
                continue
            assignment = state.topics.get(topic)
            if assignment is None:
                if topic in state.topic_names:
                    continue  # present but undecodable: the audit reports it
                out.append(f"topic {topic} (created, never deleted) is gone from /brokers/topics")
                continue
            ids = {p for p, _ in assignment.partitions}
            missing = sorted(set(range(count)) - ids)
            if missing:
                out.append(f"topic {topic} lost partitions {missing} from its assignment")
            gone = sorted(p for (t, p) in self.seen_states
                          if t == topic and (t, p) not in state.partition_states)
            if gone:
                out.append(f"topic {topic}: partition state znodes of {gone} vanished")
        return out


__all__ = ["Operation", "Workload"]
