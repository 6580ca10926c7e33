"""The ``quorum-state`` file: Kafka's ``FileQuorumStateStore`` format, one line of JSON --
``QuorumStateData`` (``clusterId``, ``leaderId``, ``leaderEpoch``, ``votedId``,
``appliedOffset``, ``currentVoters`` as ``[{"voterId": n}]``) plus ``data_version``. We write
version 0 (static voters, as Kafka before KIP-853); we read 0 and 1 (which drops clusterId and
may drop currentVoters, and adds ``votedDirectoryId``).

A write is durable and atomic: a temporary file (``quorum-state.tmp``) is written and
fsynced, renamed over the file, and the directory fsynced; a crash leaves the old state or the
new one, never a mix."""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapters.raft_log.segments import fsync_dir
from fsm.raft.log_summary import QuorumState

FILE_NAME = "quorum-state"
TEMP_SUFFIX = ".tmp"
DATA_VERSIONS_READ = (0, 1)
MAX_FILE_BYTES = 1 << 20


class QuorumStateFileError(ValueError):
    """A ``quorum-state`` file this node cannot read: it names the file and what is wrong."""


def write(directory: Path, state: QuorumState, voters: tuple[int, ...]) -> None:
    if state.epoch < 0 or state.leader_id < -1 or state.voted_id < -1:
        raise ValueError(f"not a quorum state: {state}")
    line = json.dumps({
        "clusterId": "",
        "leaderId": state.leader_id,
        "leaderEpoch": state.epoch,
        "votedId": state.voted_id,
        "appliedOffset": 0,
        "currentVoters": [{"voterId": v} for v in sorted(voters)],
        "data_version": 0,
    }, separators=(",", ":"))
    path = directory / FILE_NAME
    temp = directory / (FILE_NAME + TEMP_SUFFIX)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
    fsync_dir(directory)


def read(directory: Path) -> tuple[QuorumState, tuple[int, ...]] | None:
    """The state and the voters in the file, or None if there is no file."""
    path = directory / FILE_NAME
    try:
        raw = path.read_bytes()[:MAX_FILE_BYTES]
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw.decode("utf-8").split("\n", 1)[0])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise QuorumStateFileError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise QuorumStateFileError(f"{path}: not a JSON object")
    version = data.get("data_version")
    if version not in DATA_VERSIONS_READ:
        raise QuorumStateFileError(f"{path}: data_version {version!r}, not one of "
                                   f"{DATA_VERSIONS_READ}")

    def int_field(name: str, low: int) -> int:
        v = data.get(name, -1)
        if type(v) is not int or v < low:
            raise QuorumStateFileError(f"{path}: {name} {v!r} is not an integer >= {low}")
        return v

    epoch = max(int_field("leaderEpoch", -1), 0)
    state = QuorumState(epoch, int_field("leaderId", -1), int_field("votedId", -1))
    listed = data.get("currentVoters") or []
    if not isinstance(listed, list) or not all(
            isinstance(v, dict) and type(v.get("voterId")) is int for v in listed):
        raise QuorumStateFileError(f"{path}: currentVoters {listed!r} is not a list of "
                                   '{"voterId": n}')
    return state, tuple(v["voterId"] for v in listed)


def remove_temp(directory: Path) -> None:
    """A crash during a write may leave the temporary file: it is never read."""
    (directory / (FILE_NAME + TEMP_SUFFIX)).unlink(missing_ok=True)
