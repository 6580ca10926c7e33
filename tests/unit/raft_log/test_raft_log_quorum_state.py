"""The quorum-state file: Kafka's FileQuorumStateStore JSON, written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raft_log_support import open_log

from adapters.raft_log import PARTITION_DIR
from adapters.raft_log.quorum_state_file import QuorumStateFileError
from fsm.raft.log_summary import QuorumState


def test_absent_is_the_fresh_state(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        assert log.read_quorum_state() == QuorumState(0, -1, -1)
        assert log.read_quorum_voters() is None


def test_kafkas_keys_and_data_version_0(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        log.write_quorum_state(QuorumState(5, 2, 3), (3, 1, 2))
    text = (tmp_path / PARTITION_DIR / "quorum-state").read_text()
    assert "\n" not in text
    assert json.loads(text) == {"clusterId": "", "leaderId": 2, "leaderEpoch": 5,
                                "votedId": 3, "appliedOffset": 0,
                                "currentVoters": [{"voterId": 1}, {"voterId": 2},
                                                  {"voterId": 3}],
                                "data_version": 0}
    assert not (tmp_path / PARTITION_DIR / "quorum-state.tmp").exists()


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**31 - 1), st.integers(-1, 1000), st.integers(-1, 1000),
       st.lists(st.integers(0, 1000), unique=True, max_size=7))
def test_round_trip_and_replace(tmp_path: Path, epoch: int, leader: int, voted: int,
                                voters: list[int]) -> None:
    with open_log(tmp_path) as log:
        log.write_quorum_state(QuorumState(1, -1, -1), (9,))
        log.write_quorum_state(QuorumState(epoch, leader, voted), voters)
    with open_log(tmp_path) as log:
        assert log.read_quorum_state() == QuorumState(epoch, leader, voted)
        assert log.read_quorum_voters() == tuple(sorted(voters))


def test_kafkas_version_1_reads(tmp_path: Path) -> None:
    open_log(tmp_path).close()
    (tmp_path / PARTITION_DIR / "quorum-state").write_text(
        '{"leaderId":-1,"leaderEpoch":2,"votedId":1,'
        '"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}\n')
    with open_log(tmp_path) as log:
        assert log.read_quorum_state() == QuorumState(2, -1, 1)
        assert log.read_quorum_voters() == ()


@pytest.mark.parametrize(("text", "error"), [
    ("", "not JSON"),
    ("[1]", "not a JSON object"),
    ('{"leaderEpoch":1}', "data_version None"),
    ('{"leaderEpoch":1,"data_version":7}', "data_version 7"),
    ('{"leaderEpoch":"1","leaderId":1,"votedId":1,"data_version":0}', "leaderEpoch '1'"),
    ('{"leaderEpoch":1,"leaderId":-2,"votedId":1,"data_version":0}', "leaderId -2"),
    ('{"leaderEpoch":1,"leaderId":1,"votedId":1,"currentVoters":[1],"data_version":0}',
     "currentVoters"),
])
def test_a_bad_file_is_a_clear_error(tmp_path: Path, text: str, error: str) -> None:
    open_log(tmp_path).close()
    path = tmp_path / PARTITION_DIR / "quorum-state"
    path.write_text(text)
    with open_log(tmp_path) as log, pytest.raises(QuorumStateFileError) as err:
        log.read_quorum_state()
    assert str(path) in str(err.value) and error in str(err.value)


def test_a_bad_state_is_not_written(tmp_path: Path) -> None:
    with open_log(tmp_path) as log, pytest.raises(ValueError, match="not a quorum state"):
        log.write_quorum_state(QuorumState(-1, -1, -1), ())


def test_voters_are_kept_when_not_given(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        log.write_quorum_state(QuorumState(1, -1, -1))
        assert log.read_quorum_voters() == ()
        log.write_quorum_state(QuorumState(2, -1, 3), (3, 4, 5))
        log.write_quorum_state(QuorumState(3, 4, 3))
        assert log.read_quorum_voters() == (3, 4, 5)
        assert log.read_quorum_state() == QuorumState(3, 4, 3)
