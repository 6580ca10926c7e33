"""Which of Kafka's znodes a path is (for the codec dispatch), built on ``fsm.zk_paths``."""

from __future__ import annotations

import re

from adapters.zookeeper.codec.fields import INT32_MAX, legal_topic
from fsm import zk_paths

CONTROLLER = "controller"
CONTROLLER_EPOCH = "controller_epoch"
BROKER = "broker"
TOPIC = "topic"
PARTITION_STATE = "partition_state"
REASSIGNMENT = "reassignment"
PREFERRED_ELECTION = "preferred_election"
ISR_CHANGE = "isr_change"
LOG_DIR_EVENT = "log_dir_event"
CLUSTER_ID = "cluster_id"
EMPTY = "empty"

LOG_DIR_EVENT_PREFIX = "log_dir_event_"
_SEQ = r"[0-9]{10}"  # ZooKeeper's sequential suffix: %010d
_ID = r"(?P<id>0|[1-9][0-9]*)"
_TOPIC = r"(?P<topic>[^/]+)"
_EXACT = {
    zk_paths.CONTROLLER: CONTROLLER,
    zk_paths.CONTROLLER_EPOCH: CONTROLLER_EPOCH,
    zk_paths.REASSIGN_PARTITIONS: REASSIGNMENT,
    zk_paths.PREFERRED_REPLICA_ELECTION: PREFERRED_ELECTION,
    zk_paths.CLUSTER_ID: CLUSTER_ID,
    zk_paths.BROKER_SEQID: EMPTY,
    "/cluster": EMPTY,
    zk_paths.LOG_DIR_EVENT_NOTIFICATION: EMPTY,
    **{p: EMPTY for p in zk_paths.PERSISTENT_PATHS},
}
_PATTERNS = [
    (re.compile(re.escape(zk_paths.BROKER_IDS) + "/" + _ID), BROKER),
    (re.compile(re.escape(zk_paths.TOPICS) + "/" + _TOPIC), TOPIC),
    (re.compile(re.escape(zk_paths.TOPICS) + "/" + _TOPIC + "/partitions"), EMPTY),
    (re.compile(re.escape(zk_paths.TOPICS) + "/" + _TOPIC + "/partitions/" + _ID), EMPTY),
    (
        re.compile(re.escape(zk_paths.TOPICS) + "/" + _TOPIC + "/partitions/" + _ID + "/state"),
        PARTITION_STATE,
    ),
    (re.compile(re.escape(zk_paths.DELETE_TOPICS) + "/" + _TOPIC), EMPTY),
    (
        re.compile(
            re.escape(zk_paths.ISR_CHANGE_NOTIFICATION) + "/" + zk_paths.ISR_CHANGE_PREFIX + _SEQ
        ),
        ISR_CHANGE,
    ),
    (
        re.compile(
            re.escape(zk_paths.LOG_DIR_EVENT_NOTIFICATION) + "/" + LOG_DIR_EVENT_PREFIX + _SEQ
        ),
        LOG_DIR_EVENT,
    ),
]


def classify(path: str) -> str | None:
    """The znode kind at ``path`` (one of the constants above), or None if Kafka has no such znode.

    Ids must be decimal int32 without leading zeros (so ``/brokers/ids/007`` is not broker 7) and
    topic names legal Kafka topic names."""
    if path in _EXACT:
        return _EXACT[path]
    for pattern, kind in _PATTERNS:
        m = pattern.fullmatch(path)
        if m is None:
            continue
        groups = m.groupdict()
        if "topic" in groups and not legal_topic(groups["topic"]):
            return None
        if "id" in groups and int(groups["id"]) > INT32_MAX:
            return None
        return kind
    return None


def broker_id(path: str) -> int | None:
    m = _PATTERNS[0][0].fullmatch(path)
    return int(m["id"]) if m and int(m["id"]) <= INT32_MAX else None


def broker(broker_id: int) -> str:
    return zk_paths.broker(broker_id)
