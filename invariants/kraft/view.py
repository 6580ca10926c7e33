"""What the KRaft invariants read: one state of a KRaft cluster, as plain values.

Built by the checker from its world (``model_check.kraft.view``) and, later, by a live audit
from the processes. ``committed`` is the metadata the log has committed (the active
controller's committed image); ``log`` the committed records in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsm.kraft.image import MetadataImage


@dataclass(frozen=True)
class ControllerFacts:
    index: int
    active: bool
    committed_offset: int
    committed: MetadataImage
    image: MetadataImage
    waiting_answers: int = 0
    """Answers the controller holds until the records before them commit."""


@dataclass(frozen=True)
class BrokerFacts:
    broker_id: int
    alive: bool
    state: str
    incarnation_id: bytes | None
    epoch: int | None
    offset: int
    image: MetadataImage
    leaders: tuple[tuple[bytes, int, int], ...]
    """(topic id, partition, leader epoch) of every partition this broker leads."""


@dataclass(frozen=True)
class KRaftView:
    hw: int
    log_end: int
    log: tuple[Any, ...]
    committed: MetadataImage
    controllers: tuple[ControllerFacts, ...]
    brokers: tuple[BrokerFacts, ...]
    pending: bool
