"""Startup recovery (seed 001 section E), also run after a session expiry.

1. the assignment of every topic and the state of every partition assigned to this broker
   come in ``BrokerMetadataLoaded`` (read from ZooKeeper by the adapter or the world);
2. every assigned replica is started and leads or follows as ZooKeeper says -- unless the
   broker already holds a *fresher* view of it (a session expiry keeps the process, and a
   LeaderAndIsr or its own ISR write may be newer than the read). Of an equally fresh view
   (the same partition state) it keeps the replica list: the controller's LeaderAndIsr
   carries a finished reassignment's target replicas before the controller writes them to
   ``/brokers/topics/<t>`` (Kafka's step B3 before B6), so ZooKeeper's list may be the older
   one -- a leader that took it back added a removed replica to its ISR (found by ``kcontrol
   check deep --random --steps 100000 --seed 350``);
3. local replicas no longer assigned (deleted while the broker was away) are forgotten, and
   so are those of topics queued for deletion (``/admin/delete_topics``): the controller is
   deleting them, and a replica started from ZooKeeper now might outlive the deletion --
   the broker's previous incarnation may already have answered the deleting StopReplica, so
   the deletion completes without asking this one (found by ``kcontrol check deletion
   --random --seed 3``; transcript ``restart_during_deletion.txt``). A StopReplica for a
   replica the broker does not hold is answered without error, so a deletion that still
   waits for this broker completes.

Malformed entries (a topic named twice, a replica list with duplicates, a state whose
leader is outside its replicas) are skipped with a log record; nothing raises.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fsm.broker.replicas import view_from_zk
from fsm.broker.validation import ids_reason, tp_reason
from fsm.events import BrokerMetadataLoaded
from fsm.values import NO_LEADER, LeaderAndIsr, PartitionStateZk, TopicAssignment, TopicPartition

if TYPE_CHECKING:
    from fsm.broker.core import BrokerCore


Assigned = dict[TopicPartition, tuple[int, ...]]


def _assigned(core: BrokerCore, ev: BrokerMetadataLoaded) -> Assigned:
    own = core.config.broker_id
    out: Assigned = {}
    deleting = ev.topics_to_delete if isinstance(ev.topics_to_delete, tuple) else ()
    seen: set[str] = set()
    for entry in ev.topics if isinstance(ev.topics, tuple) else ():
        if not (isinstance(entry, tuple) and len(entry) == 2
                and isinstance(entry[1], TopicAssignment)):
            core._record("rejected", "recovery", "malformed topic entry")
            continue
        topic, assignment = entry
        if not isinstance(topic, str) or topic in seen:
            core._record("rejected", "recovery", f"topic {topic!r} malformed or named twice")
            continue
        seen.add(topic)
        if topic in deleting:
            core._record("applied", topic, "recovery: queued for deletion, not started")
            continue
        parts = assignment.partitions if isinstance(assignment.partitions, tuple) else ()
        for part in parts:
            if not (isinstance(part, tuple) and len(part) == 2):
                continue
            p, replicas = part
            reason = tp_reason((topic, p)) or ids_reason("replicas", replicas, empty_ok=False)
            if reason is not None:
                core._record("rejected", f"{topic}-{p}", f"recovery: {reason}")
            elif own in replicas:
                out[(topic, p)] = replicas
    return out


def _states(core: BrokerCore, ev: BrokerMetadataLoaded,
            assigned: Assigned) -> dict[TopicPartition, PartitionStateZk]:
    out: dict[TopicPartition, PartitionStateZk] = {}
    for entry in ev.partition_states if isinstance(ev.partition_states, tuple) else ():
        if not (isinstance(entry, tuple) and len(entry) == 2
                and isinstance(entry[1], PartitionStateZk)):
            continue
        tp, state = entry
        if tp_reason(tp) is not None or tp not in assigned:
            continue
        lai = state.leader_and_isr
        replicas = assigned[tp]
        if (not isinstance(lai, LeaderAndIsr)
                or ids_reason("isr", lai.isr, empty_ok=True) is not None
                or not set(lai.isr) <= set(replicas)
                or (lai.leader != NO_LEADER and lai.leader not in replicas)):
            core._record("rejected", f"{tp[0]}-{tp[1]}", "recovery: malformed partition state")
            continue
        out[tp] = state
    return out


def recover(core: BrokerCore, ev: BrokerMetadataLoaded) -> None:
    assigned = _assigned(core, ev)
    states = _states(core, ev, assigned)
    own = core.config.broker_id
    old = core._replicas
    new = {}
    for tp, replicas in assigned.items():
        view = view_from_zk(own, replicas, states.get(tp))
        current = old.get(tp)
        if current is not None and current.freshness > view.freshness:
            view = current
        elif (current is not None and current.freshness == view.freshness
              and own in current.replicas and current.replicas != view.replicas):
            view = replace(view, replicas=current.replicas)
        new[tp] = view
    for tp in old.keys() - new.keys():
        core._record("applied", f"{tp[0]}-{tp[1]}", "recovery: no longer assigned, deleted")
    core._replicas = new
    core._record("applied", "recovery", f"{len(new)} replicas started")
