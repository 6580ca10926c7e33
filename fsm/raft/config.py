"""A Raft node's configuration, Kafka's keys (``controller.quorum.*``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RaftConfig:
    node_id: int
    voters: tuple[int, ...]  # controller.quorum.voters (ids); a node outside them observes
    fetch_timeout_ms: int = 2000  # controller.quorum.fetch.timeout.ms
    election_timeout_ms: int = 1000  # controller.quorum.election.timeout.ms
    election_backoff_max_ms: int = 1000  # controller.quorum.election.backoff.max.ms
    request_timeout_ms: int = 2000  # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20  # controller.quorum.retry.backoff.ms
    max_batches_per_fetch: int = 64  # a Fetch answer carries at most this many batches

    @property
    def is_voter(self) -> bool:
        return self.node_id in self.voters

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1
