"""A Raft node's configuration, Kafka's keys (``controller.quorum.*``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RaftConfig:
    node_id: int
    voters: tuple[int, ...]  # controller.quorum.voters (ids); a node outside them observes
    fetch_timeout_ms: int = 2000  # controller.quorum.fetch.timeout.ms
    fetch_timeout_jitter_ms: int = 150
    """Not a Kafka key: a follower's fetch timeout is drawn from [timeout, timeout + this].
    Followers of one leader armed their timers at the same moment (the leader's last answer);
    without a spread they stand together after a crash and split the vote, and the next round
    waits an election timeout more (measured: 9 failovers in 10 needed two rounds)."""
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
