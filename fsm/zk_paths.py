"""Kafka's znode paths (reference/kafka-zookeeper-layout.md), as pure functions."""

from __future__ import annotations

CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
BROKER_SEQID = "/brokers/seqid"
CLUSTER_ID = "/cluster/id"

PERSISTENT_PATHS = (
    "/brokers", BROKER_IDS, TOPICS, "/admin", DELETE_TOPICS, ISR_CHANGE_NOTIFICATION,
)
"""Parents that must exist before a cluster runs (Kafka creates them at startup)."""


def broker(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic(name: str) -> str:
    return f"{TOPICS}/{name}"


def partitions(name: str) -> str:
    return f"{TOPICS}/{name}/partitions"


def partition(name: str, p: int) -> str:
    return f"{TOPICS}/{name}/partitions/{p}"


def partition_state(name: str, p: int) -> str:
    return f"{TOPICS}/{name}/partitions/{p}/state"


def delete_topic(name: str) -> str:
    return f"{DELETE_TOPICS}/{name}"


def isr_change(seq_name: str) -> str:
    return f"{ISR_CHANGE_NOTIFICATION}/{seq_name}"


def parse_partition_state(path: str) -> tuple[str, int] | None:
    """``/brokers/topics/t/partitions/3/state`` -> ``("t", 3)``; anything else -> None."""
    parts = path.split("/")
    if len(parts) == 7 and parts[1:3] == ["brokers", "topics"] and parts[4] == "partitions" \
            and parts[6] == "state" and parts[5].isascii() and parts[5].isdigit():
        return parts[3], int(parts[5])
    return None
