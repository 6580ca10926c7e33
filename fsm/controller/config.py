"""The controller's constant configuration (Kafka's controller settings, by Kafka's names)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    broker_id: int
    unclean_leader_election_enable: bool = False
    """``unclean.leader.election.enable``: when no ISR replica is live, elect a live
    assigned replica (ISR = [it], possible data loss). Off: leader -1, ISR unchanged."""
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    leader_imbalance_check_interval_ms: int = 300_000
    deletion_retry_ms: int = 30_000
    delete_topic_enable: bool = True
