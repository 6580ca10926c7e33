"""Znode values the core has no type for yet, the unions of all znode values, and constants."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsm.values import BrokerInfo, LeaderAndIsr, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)

LOG_DIR_FAILURE = 1
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LISTENER = re.compile(r"[A-Za-z0-9_.-]+")
_HOST = re.compile(r"[0-9a-zA-Z\-%._:]*")
_ENDPOINT = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")  # Kafka's uriParseExp


@dataclass(frozen=True, slots=True)
class LogDirEventZnode:
    """``/log_dir_event_notification/log_dir_event_<seq>``: a broker's log directory failed."""

    broker_id: int
    event: int = LOG_DIR_FAILURE


@dataclass(frozen=True, slots=True)
class ClusterIdZnode:
    """``/cluster/id``: the cluster's id (Kafka: a 22-character base64 UUID)."""

    cluster_id: str


ZnodeValue = (
    ControllerZnode
    | ControllerEpochZnode
    | BrokerRegistration
    | TopicAssignment
    | LeaderAndIsr
    | ReassignmentZnode
    | PreferredElectionZnode
    | IsrChangeZnode
    | LogDirEventZnode
    | ClusterIdZnode
    | EmptyZnode
)


def broker_info(registration: BrokerRegistration, czxid: int) -> BrokerInfo:
    """The core's ``BrokerInfo``: the registration plus its epoch, the znode's czxid."""
    return BrokerInfo(registration.broker_id, czxid, registration.endpoints, registration.rack)
