"""The KRaft broker core (seed 004, issue 23 item 6): registration and heartbeats, the
lifecycle of ``KRAFT_BROKER_TABLE``, committed metadata replayed through the controller's
``MetadataImage.apply``, replica roles from the image, the leader's AlterPartition, and
client Metadata from the image. ``KRaftBroker(KRaftBrokerConfig(...))``;
``handle(event) -> list[effect]``. See ``core`` for the module map."""

from fsm.kraft.broker.config import KRaftBrokerConfig
from fsm.kraft.broker.core import HANDLED_EVENTS, KRaftBroker
from fsm.kraft.broker.replicas import LocalReplica, Role

__all__ = ["HANDLED_EVENTS", "KRaftBroker", "KRaftBrokerConfig", "LocalReplica", "Role"]
