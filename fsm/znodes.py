"""The data kept in Kafka's znodes, as structured values.

The core writes and reads these values; the ZooKeeper adapter turns them into
Kafka's exact JSON and back (its codecs), and the simulated world stores them
as they are. ``LeaderAndIsr`` (partition state) and ``TopicAssignment``
(topic znode) live in ``fsm.values``; the rest are here.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsm.values import Endpoint, TopicPartition


@dataclass(frozen=True, slots=True)
class ControllerZnode:
    """``/controller``: who the active controller is (ephemeral)."""

    broker_id: int
    timestamp_ms: int = 0  # the adapter stamps the wall clock; the core has none


@dataclass(frozen=True, slots=True)
class ControllerEpochZnode:
    """``/controller_epoch``: the epoch as a plain integer string in Kafka."""

    epoch: int


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """``/brokers/ids/<id>`` (ephemeral). Its czxid, not its data, is the broker epoch."""

    broker_id: int
    endpoints: tuple[Endpoint, ...] = ()
    rack: str | None = None
    timestamp_ms: int = 0


@dataclass(frozen=True, slots=True)
class ReassignmentZnode:
    """``/admin/reassign_partitions``: target replica lists."""

    partitions: tuple[tuple[TopicPartition, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class PreferredElectionZnode:
    """``/admin/preferred_replica_election``: partitions to move to their preferred replica."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class IsrChangeZnode:
    """``/isr_change_notification/isr_change_<seq>``: partitions whose ISR a leader changed."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class EmptyZnode:
    """A znode whose data Kafka leaves empty (``/admin/delete_topics/<t>``, parents)."""
