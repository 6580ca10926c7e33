"""``adapters.admin.describe``: the exact bytes ZooKeeper-era ``kafka-topics.sh --describe``
prints (tabs included), the filters, and kcontrol's fields behind ``verbose``."""

from __future__ import annotations

from adapters.admin.describe import Filters, PartitionView, TopicView, describe_lines

HEALTHY = PartitionView(0, (1, 2, 3), leader=1, isr=(1, 2, 3), leader_epoch=4)
LEADERLESS = PartitionView(1, (2, 3, 1), leader=None, isr=(2,), leader_epoch=7)
MOVING = PartitionView(
    2, (4, 1, 2, 3), leader=1, isr=(1, 2, 3), leader_epoch=9,
    adding=(4,), removing=(3,), reassigning=True, reassigning_to=(4, 1, 2),
)
TOPIC = TopicView("t", (LEADERLESS, HEALTHY, MOVING), configs=(("retention.ms", "1000"),))


def test_header_and_partition_lines_are_kafkas() -> None:
    assert describe_lines([TOPIC], live=[1, 2, 3]) == [
        "Topic: t\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: retention.ms=1000",
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2",
        "\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 4,1,2,3\tIsr: 1,2,3"
        "\tAdding Replicas: 4\tRemoving Replicas: 3",
    ]


def test_no_configs_no_state_and_deletion() -> None:
    gone = TopicView("gone", (PartitionView(0, (3,)),), marked_for_deletion=True)
    assert describe_lines([gone], live=[3]) == [
        "Topic: gone\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true",
        "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \tMarkedForDeletion: true",
    ]


def test_replication_factor_leaves_out_replicas_being_added() -> None:
    moving_first = TopicView("m", (MOVING,))
    assert describe_lines([moving_first], live=[1])[0].startswith(
        "Topic: m\tPartitionCount: 1\tReplicationFactor: 3\t"
    )


def test_filters_print_partitions_only() -> None:
    under = describe_lines([TOPIC], live=[1, 2, 3], filters=Filters(under_replicated=True))
    assert under == ["\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2"]
    # broker 1 is not registered: partitions it leads are unavailable too
    unavailable = describe_lines([TOPIC], live=[2, 3], filters=Filters(unavailable=True))
    assert [line.split("\t")[2] for line in unavailable] == [
        "Partition: 0", "Partition: 1", "Partition: 2"
    ]
    assert describe_lines([TOPIC], live=[1], filters=Filters(unavailable=True)) == [
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2"
    ]


def test_verbose_adds_kcontrols_fields_after_kafkas() -> None:
    electing = PartitionView(0, (1, 2), leader=2, isr=(1, 2), leader_epoch=5,
                             election_pending=True)
    lines = describe_lines([TopicView("v", (electing, MOVING))], live=[1, 2], verbose=True)
    assert lines[1:] == [
        "\tTopic: v\tPartition: 0\tLeader: 2\tReplicas: 1,2\tIsr: 1,2\tLeaderEpoch: 5"
        "\tPreferredElectionPending: true",
        "\tTopic: v\tPartition: 2\tLeader: 1\tReplicas: 4,1,2,3\tIsr: 1,2,3"
        "\tAdding Replicas: 4\tRemoving Replicas: 3\tLeaderEpoch: 9\tReassigningTo: 4,1,2",
    ]


def test_undecodable_znodes_show_their_error_even_when_filtering() -> None:
    broken = TopicView("b", error="bad JSON")
    bad_state = TopicView("c", (PartitionView(0, (1,), error="bad state"),))
    assert describe_lines([broken, bad_state], live=[1], filters=Filters(unavailable=True)) == [
        "Topic: b\tError: bad JSON",
        "\tTopic: c\tPartition: 0\tReplicas: 1\tError: bad state",
    ]
