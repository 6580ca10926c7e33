"""Kafka's znode paths: the one parser in fsm/zk_paths.py."""

from fsm.zk_paths import parse_partition_state, partition_state


def test_partition_state_paths_round_trip():
    assert parse_partition_state(partition_state("orders", 12)) == ("orders", 12)


def test_non_ascii_digits_are_not_partition_ids():
    # "²".isdigit() is True in Python, but int("²") raises: the parser must refuse it.
    assert parse_partition_state("/brokers/topics/t/partitions/²/state") is None
    assert parse_partition_state("/brokers/topics/t/partitions/x/state") is None
    assert parse_partition_state("/brokers/topics/t/partitions/0/other") is None
