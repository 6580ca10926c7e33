"""The world's constant configuration: brokers, fault budgets, admin actions.

The model checker bounds its search with it: every fault kind has a budget
(how many times it may happen along one path) and every admin action happens
at most once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsm.values import TopicPartition


@dataclass(frozen=True, slots=True)
class CreateTopic:
    """``kafka-topics --create``: write ``/brokers/topics/<topic>`` with the assignment."""

    topic: str
    assignment: tuple[tuple[int, tuple[int, ...]], ...]

    def describe(self) -> str:
        parts = " ".join(f"{p}:{','.join(map(str, r))}" for p, r in self.assignment)
        return f"create-topic {self.topic} {parts}"


@dataclass(frozen=True, slots=True)
class DeleteTopic:
    """``kafka-topics --delete``: create ``/admin/delete_topics/<topic>``."""

    topic: str

    def describe(self) -> str:
        return f"delete-topic {self.topic}"


@dataclass(frozen=True, slots=True)
class AddPartitions:
    """``kafka-topics --alter --partitions``: rewrite ``/brokers/topics/<topic>`` with more."""

    topic: str
    added: tuple[tuple[int, tuple[int, ...]], ...]

    def describe(self) -> str:
        parts = " ".join(f"{p}:{','.join(map(str, r))}" for p, r in self.added)
        return f"add-partitions {self.topic} {parts}"


@dataclass(frozen=True, slots=True)
class Reassign:
    """``kafka-reassign-partitions --execute``: create ``/admin/reassign_partitions``."""

    targets: tuple[tuple[TopicPartition, tuple[int, ...]], ...]

    def describe(self) -> str:
        parts = " ".join(f"{t}-{p}:{','.join(map(str, r))}" for (t, p), r in self.targets)
        return f"reassign {parts}"


@dataclass(frozen=True, slots=True)
class PreferredElection:
    """``kafka-preferred-replica-election``: create ``/admin/preferred_replica_election``."""

    partitions: tuple[TopicPartition, ...]

    def describe(self) -> str:
        return "preferred-election " + " ".join(f"{t}-{p}" for t, p in self.partitions)


@dataclass(frozen=True, slots=True)
class ControlledShutdownOf:
    """SIGTERM to a broker: a controlled shutdown (scenario op ``controlled-shutdown``), or
    with ``controlled=False`` the second SIGTERM that stops it at once (op ``stop``; also
    what a broker does when its controlled shutdown overruns its deadline)."""

    broker: int
    controlled: bool = True

    def describe(self) -> str:
        return f"shutdown {self.broker}" if self.controlled else f"stop {self.broker}"


AdminOp = CreateTopic | DeleteTopic | AddPartitions | Reassign | PreferredElection \
    | ControlledShutdownOf

# fault kinds (budget keys)
CRASH = "crash"
RESTART = "restart"
EXPIRE_BROKER = "expire-broker"
EXPIRE_CONTROLLER = "expire-controller"
DROP = "drop"
ISR_CHANGE = "isr-change"
TIMER = "timer"
ZK_DISCONNECT = "zk-disconnect"
FAULT_KINDS = (CRASH, RESTART, EXPIRE_BROKER, EXPIRE_CONTROLLER, DROP, ISR_CHANGE, TIMER,
               ZK_DISCONNECT)


@dataclass(frozen=True, slots=True)
class WorldConfig:
    """``brokers`` are numbered 1..n. ``faults`` maps a fault kind to how many times it may
    happen on one path (absent = never). ``admin`` lists the admin actions available, each at
    most once. ``timers``: timer firings offered as actions (``TIMER`` budget bounds them;
    the runner's ``run`` fires the non-periodic ones when nothing else is left)."""

    brokers: int = 3
    faults: tuple[tuple[str, int], ...] = ()
    admin: tuple[AdminOp, ...] = ()
    channel_bound: int = 16
    queue_bound: int = 64
    unclean_leader_election: bool = False
    auto_leader_rebalance: bool = True
    controlled_shutdown_max_retries: int = 3
    extra: tuple[tuple[str, object], ...] = field(default=())

    def budget(self, kind: str) -> int:
        for k, n in self.faults:
            if k == kind:
                return n
        return 0

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self.brokers + 1))

    @staticmethod
    def with_faults(brokers: int = 3, admin: tuple[AdminOp, ...] = (), **faults: int
                    ) -> WorldConfig:
        """``WorldConfig.with_faults(3, crash=2, expire_controller=1)``."""
        return WorldConfig(brokers=brokers, admin=admin, faults=tuple(sorted(
            (k.replace("_", "-"), n) for k, n in faults.items())))
