"""``kcontrol dump-log``: Kafka's DumpLogSegments lines for a segment and a snapshot written by
the real log code, our ``--json`` lines, and what a corrupt or torn file prints (what decodes,
then one error naming the file and the byte) -- over any corruption, nothing but that error."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from metadata_sample import CLOCK_MS, records, write_log, write_snapshot

from adapters.cli import main
from adapters.metadata_tools.dump_format import (
    DumpError,
    batches,
    dump_lines,
    file_kind,
    json_lines,
)
from fsm.kraft.records.json_form import payload_line, record_to_json

SEGMENT = "00000000000000000000.log"


def _dump(path: Path, **kw: object) -> list[str]:
    return list(dump_lines(path.read_bytes(), file_kind(path.name), **kw))  # type: ignore[arg-type]


def test_a_segment_prints_kafkas_batch_and_record_lines(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    data = seg.read_bytes()
    lines = _dump(seg)
    assert lines[0] == "Log starting offset: 0"
    size = struct.unpack_from(">i", data, 8)[0] + 12
    crc = crc32c(data[21:size])
    assert lines[1] == (
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false isControl: true "
        f"deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: {CLOCK_MS} size: {size} "
        f"magic: 2 compresscodec: none crc: {crc} isvalid: true")
    assert lines[2] == (f"| offset: 0 CreateTime: {CLOCK_MS} keySize: 4 valueSize: 34 "
                        "sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)")
    assert lines[3].startswith("baseOffset: 1 lastOffset: 1 count: 1 ") and (
        f" position: {size} " in lines[3])
    payloads = [line.split(" payload: ", 1)[1] for line in lines if " payload: " in line]
    assert payloads == [payload_line(r) for r in records()]
    offsets = [int(line.split()[2]) for line in lines if line.startswith("| offset: ")]
    assert offsets == list(range(10))
    last = lines[-1]
    assert last.startswith(f"| offset: 9 CreateTime: {CLOCK_MS} keySize: -1 valueSize: 30 ")
    assert last.endswith(' payload: {"type":"PARTITION_CHANGE_RECORD","version":0,"data":'
                         '{"partitionId":0,"topicId":"GU_rXds2FGppL1JqXYpx2g","leader":-1}}')


def test_a_snapshot_prints_its_id_header_and_footer(tmp_path: Path) -> None:
    lines = _dump(write_snapshot(tmp_path))
    assert lines[0] == "Snapshot end offset: 10, epoch: 3"
    assert lines[2].endswith(' headerKeys: [] SnapshotHeader {"version":0,'
                             f'"lastContainedLogTimestamp":{CLOCK_MS}}}')
    assert lines[-1].endswith(' headerKeys: [] SnapshotFooter {"version":0}')
    assert "isControl: true" in lines[-2] and "baseOffset: 8 lastOffset: 8" in lines[-2]


def test_skip_record_metadata_and_shallow(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    skipped = _dump(seg, skip_record_metadata=True)
    assert skipped[2] == ""  # the control record: Kafka prints nothing for it
    assert skipped[4] == " payload: " + payload_line(records()[0])
    shallow = _dump(seg, deep=False)
    assert len(shallow) == 1 + 4 and all(s.startswith("baseOffset: ") for s in shallow[1:])


def test_json_lines_one_object_per_record(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    objs = [json.loads(line) for line in json_lines(seg.read_bytes(), file_kind(SEGMENT), "f")]
    assert [o["offset"] for o in objs] == list(range(10))
    assert objs[0] == {"file": "f", "offset": 0, "batchBaseOffset": 0, "batchPosition": 0,
                       "epoch": 3, "timestamp": CLOCK_MS, "control": True,
                       "type": "LEADER_CHANGE", "version": 0,
                       "data": {"leaderId": 1, "voters": [{"voterId": v} for v in (1, 2, 3)],
                                "grantingVoters": [{"voterId": 1}, {"voterId": 2}]}}
    assert [{k: o[k] for k in ("type", "version", "data")} for o in objs[1:]] == [
        record_to_json(r) for r in records()]
    assert objs[5]["batchBaseOffset"] == 5 and objs[5]["offset"] == 5


def test_a_flipped_byte_prints_what_decodes_then_the_position(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    good = _dump(seg)
    data = bytearray(seg.read_bytes())
    third = next(b.position for b in batches(bytes(data)) if b.header.base_offset == 2)
    data[third + 100] ^= 0x40  # inside the third batch's records: the CRC catches it
    seg.write_bytes(bytes(data))
    out: list[str] = []
    with pytest.raises(DumpError) as err:
        for line in dump_lines(bytes(data), file_kind(SEGMENT)):
            out.append(line)
    assert out == good[:5]  # the header and the first two batches with their records
    assert err.value.position == third + 17 and err.value.offset == 2
    assert "CRC-32C mismatch" in str(err.value)

    r = CliRunner().invoke(main, ["dump-log", "--cluster-metadata-decoder", str(seg)])
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [f"Dumping {seg}", *good[:5]]
    assert r.stderr.strip() == (f"error: {seg}: corrupt at byte {third + 17} (offset 2): "
                                "CRC-32C mismatch")


def test_a_torn_tail_names_the_batch_that_runs_past_the_end(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    data = seg.read_bytes()
    last = list(batches(data))[-1]
    seg.write_bytes(data[:last.position + 70])
    r = CliRunner().invoke(main, ["dump-log", "--cluster-metadata-decoder", str(seg)])
    assert r.exit_code == 1
    assert r.stdout.splitlines()[-1].startswith("| offset: 4 ")
    assert f"corrupt at byte {last.position} (offset 5): batch of {last.header.size} bytes " \
           "runs past the end of the file" in r.stderr


def test_a_segment_whose_name_disagrees_with_its_first_offset(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    moved = seg.with_name("00000000000000000004.log")
    seg.rename(moved)
    with pytest.raises(DumpError, match="batch at offset 0, expected 4"):
        _dump(moved)


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    other = tmp_path / "quorum-state"
    other.write_text("{}")
    for args, words in ([[str(other)], "not a metadata log file"],
                        [[str(tmp_path / "missing.log")], "no such file"],
                        [[], "no file to dump"]):
        r = CliRunner().invoke(main, ["dump-log", "--cluster-metadata-decoder", *args])
        assert r.exit_code == 2 and words in r.output, (args, r.output)
    with pytest.raises(ValueError, match="named by its base offset"):
        file_kind("abc.log")


def test_json_to_stdout_or_a_file(tmp_path: Path) -> None:
    seg = write_log(tmp_path) / SEGMENT
    r = CliRunner().invoke(main, ["dump-log", "--json", "-", str(seg)])
    assert r.exit_code == 0, r.output
    assert [json.loads(line)["offset"] for line in r.stdout.splitlines()] == list(range(10))
    before = seg.read_bytes()
    r = CliRunner().invoke(main, ["dump-log", "--json", str(seg)])  # --json takes seg as FILE
    assert r.exit_code == 2 and "is a metadata log file" in r.output
    assert seg.read_bytes() == before
    out = tmp_path / "records.jsonl"
    r = CliRunner().invoke(main, ["dump-log", str(seg), "--json", str(out)])
    assert r.exit_code == 0 and r.stdout == ""
    assert out.read_text() == "".join(
        line + "\n" for line in json_lines(seg.read_bytes(), file_kind(SEGMENT), str(seg)))


def test_several_files_and_the_files_option(tmp_path: Path) -> None:
    snap = write_snapshot(tmp_path)
    seg = snap.parent / SEGMENT
    r = CliRunner().invoke(main, ["dump-log", "--cluster-metadata-decoder", str(seg),
                                  "--files", str(snap)])
    assert r.exit_code == 0, r.output
    dumping = [line for line in r.stdout.splitlines() if line.startswith("Dumping ")]
    assert dumping == [f"Dumping {seg}", f"Dumping {snap}"]


_SAMPLE: dict[str, bytes] = {}


def _sample(tmp: Path) -> bytes:
    if "log" not in _SAMPLE:
        _SAMPLE["log"] = (write_log(tmp) / SEGMENT).read_bytes()
    return _SAMPLE["log"]


@settings(max_examples=300, deadline=None)
@given(cut=st.integers(0, 10_000), flips=st.lists(st.tuples(st.integers(0, 10_000),
                                                           st.integers(1, 255)), max_size=3))
def test_any_damage_is_a_dump_error_or_nothing(tmp_path_factory: pytest.TempPathFactory,
                                               cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(_sample(tmp_path_factory.mktemp("s")))
    for at, mask in flips:
        data[at % len(data)] ^= mask
    data = data[:cut % (len(data) + 1)]
    try:
        for _ in dump_lines(bytes(data), file_kind(SEGMENT)):
            pass
        for _ in json_lines(bytes(data), file_kind(SEGMENT), "f"):
            pass
    except DumpError as exc:
        assert 0 <= exc.position <= len(data)
