"""``MetadataObserver``: the broker's replica of the metadata log -- a ``RaftNodeShell`` whose
core observes the quorum (the broker's node id is not one of ``controller.quorum.voters``),
its log in ``<metadata.log.dir>``, its transport connecting out to the voters' controller
listeners. The runner is ``metadata_feed.MetadataFeed``: committed records and installed
snapshots go to the broker core through ``publish``, the leader it follows to ``on_leader``.

The transport binds an ephemeral loopback port nobody is told of (the quorum's transport
always listens; an observer is never sent requests). Fetches name the broker's cluster id:
a quorum of another cluster answers INCONSISTENT_CLUSTER_ID and the observer never follows
it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from adapters.kraft_broker.metadata_feed import MetadataFeed, OnLeader, Publish
from adapters.kraft_node.settings import NodeSettings
from adapters.network.codec.raft_convert import RaftConverter
from adapters.raft_log import BYTES, MetadataLog
from adapters.raft_node.port import NodePort
from adapters.raft_node.shell import RaftCore, RaftNodeShell, Runner
from adapters.raft_node.status import NodeStatus
from adapters.raft_node.wire_records import records_codec
from adapters.raft_transport import RaftTransport
from fsm.raft.config import RaftConfig

log = logging.getLogger("kcontrol.kraft.broker")

OBSERVER_QUEUE = 4096


def raft_config(settings: NodeSettings) -> RaftConfig:
    """The observer's Raft configuration: the quorum's timeouts from the settings."""
    if settings.node_id in settings.quorum_voters:
        raise ValueError(f"node.id {settings.node_id} is one of controller.quorum.voters: a "
                         "broker-only node observes the quorum and is not a voter")
    return RaftConfig(node_id=settings.node_id, voters=tuple(sorted(settings.quorum_voters)),
                      fetch_timeout_ms=settings.controller_quorum_fetch_timeout_ms,
                      election_timeout_ms=settings.controller_quorum_election_timeout_ms,
                      election_backoff_max_ms=settings.controller_quorum_election_backoff_max_ms,
                      request_timeout_ms=settings.controller_quorum_request_timeout_ms,
                      retry_backoff_ms=settings.controller_quorum_retry_backoff_ms)


class MetadataObserver:
    def __init__(self, settings: NodeSettings, cluster_id: str, publish: Publish,
                 on_leader: OnLeader, *, on_halt: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.cluster_id = cluster_id
        self.config = raft_config(settings)
        self._publish = publish
        self._on_leader = on_leader
        self._on_halt = on_halt
        self.feed: MetadataFeed | None = None
        self.shell: RaftNodeShell | None = None
        self.transport: RaftTransport | None = None

    def start(self) -> MetadataObserver:
        directory = self.settings.metadata_log_dir
        directory.mkdir(parents=True, exist_ok=True)
        metadata_log = MetadataLog.open(directory, serde=BYTES)
        self.shell = RaftNodeShell(self.config, metadata_log, None, make_runner=self._runner,
                                   queue_capacity=OBSERVER_QUEUE, on_halt=self._on_halt)
        converter = RaftConverter(records_codec(BYTES), self.cluster_id)
        self.transport = RaftTransport(
            self.settings.node_id, self.settings.quorum_voters, ("127.0.0.1", 0),
            self.shell.deliver, converter=converter,
            retry_backoff_ms=max(self.config.retry_backoff_ms, 1),
            request_timeout_ms=self.config.request_timeout_ms)
        self.shell.attach_transport(self.transport)
        self.shell.start()
        self.transport.start()
        log.info("[broker %d] observing the metadata quorum %s from %s",
                 self.settings.node_id, sorted(self.settings.quorum_voters), directory)
        return self

    def _runner(self, core: RaftCore, port: NodePort) -> Runner:
        self.feed = MetadataFeed(core, port, self._publish, self._on_leader)
        return self.feed

    @property
    def status(self) -> NodeStatus | None:
        return None if self.shell is None else self.shell.status

    def stop(self) -> None:
        if self.shell is not None:
            self.shell.stop()


def leader_address(settings: NodeSettings, leader_id: int) -> tuple[str, int] | None:
    """The controller listener of voter ``leader_id`` (its ``controller.quorum.voters`` entry),
    or None for no (known) leader."""
    return settings.quorum_voters.get(leader_id) if leader_id >= 0 else None


__all__ = ["MetadataObserver", "leader_address", "raft_config"]
