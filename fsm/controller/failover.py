"""Failover: ``ClusterLoaded`` makes the newly elected controller's state (seed 001 §D).

Load live brokers, assignments, partition states, deletions and reassignments in flight
(malformed entries are rejected and skipped; rejected and already finished reassignments
are removed from ``/admin/reassign_partitions``); partitions with a live leader are
Online, with a dead one Offline, without a state znode New; replicas on live brokers
Online, others Offline (and out of the ISR: a dead ISR member is removed as on a broker
failure, never the last member) -- a load, not transitions (``_load_states``: the setters'
``load`` mode), followed by the replicas' startup self-transitions, which are. Then one
round: elect leaders for New/Offline partitions, preferred elections left in ZooKeeper,
delete the handled admin and ISR-notification znodes; on its result a full LeaderAndIsr to
every live broker for all its replicas and UpdateMetadata with every partition and the
live brokers to all (even with no partition: the brokers learn the controller and the live
set). Reassignments and deletions resume in the follow-on rounds; the deletion-retry and
auto-rebalance timers start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.plan import Plan
from fsm.controller.records import INIT, OFFLINE, PREFERRED
from fsm.controller.validation import assignment_problem, replicas_problem, topic_name_problem
from fsm.effects import DeleteOp, StartTimer
from fsm.events import ClusterLoaded, TimerKind
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.values import BrokerInfo, PartitionStateZk, TopicPartition

if TYPE_CHECKING:
    from fsm.controller.controller import Controller

_P = PartitionState
_R = ReplicaState


class FailoverMixin:
    def _on_cluster_loaded(self: Controller, ev: ClusterLoaded) -> None:
        if not self._active or self._loaded:
            self._reject(None, "ClusterLoaded while not an elected controller awaiting it")
            return
        snap = ev.snapshot
        ctx = self.ctx
        for reason in snap.bad_input:
            self._reject(None, f"skipped by the reader: {reason}")
        for info in snap.live_brokers:
            if not isinstance(info, BrokerInfo) or info.broker_id < 0 \
                    or info.broker_id in ctx.live:
                self._reject(None, f"bad broker registration {info!r}")
                continue
            ctx.live[info.broker_id] = info
        for name, assignment in sorted(snap.topics, key=lambda x: x[0]):
            problem = topic_name_problem(name) or (
                None if name not in ctx.topics else "topic listed twice") or \
                assignment_problem(assignment)
            if problem:
                self._reject(name, f"topic {name!r}: {problem}")
                continue
            parts = assignment.as_dict()
            tps = tuple((name, p) for p in range(len(parts)))
            ctx.topics[name] = tps
            for tp in tps:
                ctx.assignment[tp] = ctx.intern(parts[tp[1]])
        for key, psz in snap.partition_states:
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            if tp is None or not isinstance(psz, PartitionStateZk) \
                    or not psz.leader_and_isr.isr:
                self._reject(key, "partition state for an unknown partition or malformed")
                continue
            li = psz.leader_and_isr
            li = type(li)(li.leader, li.leader_epoch, ctx.intern(li.isr), li.controller_epoch)
            ctx.states[tp] = PartitionStateZk(li, psz.version)
        live = ctx.live
        plan = Plan()
        for t in sorted(snap.topics_to_delete):
            if t in ctx.topics:
                ctx.to_delete.add(t)
            elif topic_name_problem(t) is None:
                plan.ops.append(DeleteOp(zk_paths.delete_topic(t)))
        rewrite = False  # drop rejected and finished entries from /admin/reassign_partitions
        for key, target in sorted(snap.reassignments):
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            problem = "unknown partition" if tp is None else replicas_problem(target)
            if problem is None and tp[0] in ctx.to_delete:
                problem = "topic is being deleted"
            if problem:
                self._reject(key, f"reassignment: {problem}")
                rewrite = True
                continue
            if tuple(target) != ctx.assignment[tp]:
                ctx.reassignments[tp] = ctx.intern(tuple(target))
            else:
                rewrite = True
        if rewrite:
            plan.ops.append(self._reassignment_znode_op())
        replicas = self._load_states()
        self._log("info", None, "", "", f"loaded {len(ctx.topics)} topics, "
                  f"{len(ctx.assignment)} partitions, {len(live)} live brokers")
        self._start_replica_states(replicas)
        self._loaded = True
        plan.followups.append(("full",))
        alive = set(live)
        eligible = ctx.eligible()
        self._plan_elections(plan, alive, eligible)
        self._plan_dead_isr_removal(plan, alive, eligible)
        for key in sorted(snap.preferred_elections):
            tp = ctx.tp(*key) if isinstance(key, tuple) and len(key) == 2 else None
            if tp is not None and tp[0] not in ctx.to_delete:
                self._plan_decision(plan, tp, PREFERRED, 0, alive, eligible)
        if snap.preferred_elections:
            plan.ops.append(DeleteOp(zk_paths.PREFERRED_REPLICA_ELECTION))
        for n in sorted(snap.isr_change_notifications):
            plan.ops.append(DeleteOp(zk_paths.isr_change(n)))
        self._effects.append(StartTimer(TimerKind.DELETION_RETRY, self.config.deletion_retry_ms))
        if self.config.auto_leader_rebalance_enable:
            self._effects.append(StartTimer(TimerKind.AUTO_REBALANCE,
                                            self.config.leader_imbalance_check_interval_ms))
        self._run(plan)

    def _load_states(self: Controller) -> list[tuple[TopicPartition, int, ReplicaState]]:
        """The controller's memory of the partition and replica states begins: a load, not
        transitions (Kafka's ``initializePartitionState`` / ``initializeReplicaState``). The
        states are what ZooKeeper says, not moves this controller decides -- the tables have
        no move from NonExistent to Online or Offline -- so they go through the setters'
        ``load`` mode (logged as ``loaded``, not checked against the tables; the
        self-transitions of ``_start_replica_states`` that follow are).

        Partitions: New without a state znode, Online with a live leader, else Offline.
        Replicas: Online on a live broker, else Offline -- except the replicas a reassignment
        must start again (``_replicas_to_restart``), which stay NonExistent. Returns the
        replicas loaded, as ``(tp, broker, state)``."""
        ctx = self.ctx
        live = ctx.live
        states = ctx.states
        moves = []
        for tp in ctx.assignment:
            st = states.get(tp)
            moves.append((tp, _P.NewPartition if st is None else _P.OnlinePartition
                          if st.leader_and_isr.leader in live else _P.OfflinePartition))
        self._move_partitions(moves, "controller failover: loaded", load=True)
        restart = self._replicas_to_restart()
        online, offline = _R.OnlineReplica, _R.OfflineReplica
        replicas = [(tp, b, online if b in live else offline)
                    for tp, rs in ctx.assignment.items() for b in rs
                    if not restart or (tp, b) not in restart]
        self._move_replicas(replicas, "controller failover: loaded", load=True)
        return replicas

    def _start_replica_states(self: Controller,
                              replicas: list[tuple[TopicPartition, int, ReplicaState]]) -> None:
        """ReplicaStateMachine.startup after the load (Kafka's ``initializeReplicaState``
        then ``handleStateChanges``): every replica loaded (``replicas``, as ``(tp, broker,
        state)``) on a live broker moves OnlineReplica -> OnlineReplica (the full LeaderAndIsr
        of this failover starts it), every one on a dead broker OfflineReplica ->
        OfflineReplica -- through ``_move_replicas``: checked against the table and logged,
        one record per group."""
        online = _R.OnlineReplica
        self._move_replicas([m for m in replicas if m[2] is online],
                            "controller failover: replica on a live broker")
        self._move_replicas([m for m in replicas if m[2] is not online],
                            "controller failover: replica on a dead broker")

    def _replicas_to_restart(self: Controller) -> set[tuple[TopicPartition, int]]:
        """A reassignment found already expanded (the topic znode holds RS, a superset of the
        target) whose target replicas are not all in the ISR is restarted at its leader-epoch
        bump, as Kafka's ``onPartitionReassignment`` does on failover: the target replicas
        not in the ISR are not loaded (they stay NonExistentReplica), so the first follow-on
        round bumps the leader epoch and, once that committed, sends LeaderAndIsr to every
        replica of RS.

        The new controller cannot tell whether its predecessor's bump committed, and the
        failover's full LeaderAndIsr carries the unchanged leader epoch: a leader ignores a
        state with the leader epoch and znode version it already has, so it would never
        learn the added replicas, never take them into its ISR, and the reassignment would
        wait forever (found by ``kcontrol chaos``: a ZooKeeper leader killed while the
        controller was between the expansion and the bump)."""
        ctx = self.ctx
        out: set[tuple[TopicPartition, int]] = set()
        for tp, target in ctx.reassignments.items():
            st = ctx.states.get(tp)
            replicas = ctx.assignment.get(tp)
            if st is None or replicas is None or not set(target) <= set(replicas):
                continue
            isr = st.leader_and_isr.isr
            out.update((tp, b) for b in target if b not in isr)
        return out

    def _plan_dead_isr_removal(self: Controller, plan: Plan, alive: set[int],
                               eligible: set[int]) -> None:
        """ReplicaStateMachine.startup: replicas on dead brokers are OfflineReplica (set by
        the load) and leave the ISR -- as ``onBrokerFailure`` does for a broker that died
        while no controller was there to see it. The OFFLINE decision keeps the live ISR
        members (never the last member: a partition whose ISR is all dead keeps it)."""
        ctx = self.ctx
        to_delete = ctx.to_delete
        for tp, st in ctx.states.items():
            if tp in plan.writes or tp[0] in to_delete or tp not in ctx.assignment:
                continue
            if not alive.issuperset(st.leader_and_isr.isr):
                self._plan_decision(plan, tp, OFFLINE, 0, alive, eligible)

    def _plan_elections(self: Controller, plan: Plan, alive: set[int],
                        eligible: set[int]) -> None:
        """Elect leaders for every New and Offline partition (not of topics being deleted)."""
        ctx = self.ctx
        to_delete = ctx.to_delete
        for tp, ps in ctx.partition_state.items():
            if ps is _P.OnlinePartition or tp[0] in to_delete:
                continue
            if tp in ctx.states:
                self._plan_decision(plan, tp, OFFLINE, 0, alive, eligible)
            else:
                self._plan_decision(plan, tp, INIT, 0, alive, eligible)
