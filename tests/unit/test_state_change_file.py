"""The state-change log's file rotates by size: written far past its bound, it keeps at most
``files`` files of under ``max_bytes`` each, and the newest lines, in order, with none lost
between the files -- also when the lines come in batches (``log_lines``: one record, written
one formatted line each; one record per line anywhere else); sizes parse as log4j writes them
and bad ones are refused."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.state_change_file import (
    MAX_MAX_BYTES,
    MIN_MAX_BYTES,
    StateChangeFile,
    log_lines,
    parse_size,
)


def _write(handler: logging.Handler, lines: int) -> list[str]:
    logger = logging.getLogger("kcontrol.test.state.change.file")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        written = [f"broker {i % 7} moved from online to offline, line {i:05d}"
                   for i in range(lines)]
        for text in written:
            logger.info("%s", text)
    finally:
        logger.removeHandler(handler)
        handler.close()
    return written


def test_written_past_its_bound_it_keeps_the_newest_lines_in_at_most_files_files(
        tmp_path: Path) -> None:
    path = tmp_path / "logs" / "state-change.log"
    written = _write(StateChangeFile(path, max_bytes=1024, files=3), 2000)  # ~110 KB
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == ["state-change.log", "state-change.log.1", "state-change.log.2"]
    sizes = [p.stat().st_size for p in path.parent.iterdir()]
    assert all(0 < s < 1024 for s in sizes), sizes
    kept = []
    for name in ("state-change.log.2", "state-change.log.1", "state-change.log"):
        kept += (path.parent / name).read_text().splitlines()
    assert kept[-1] == written[-1], "the newest line is in the file being written"
    assert kept == written[-len(kept):], "the newest lines, in order, none missing"
    assert len(kept) >= 2 * 1024 // 60, "the rotated files are full, not truncated"


def test_under_its_bound_it_is_one_file_created_with_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "state-change.log"
    handler = StateChangeFile(path, max_bytes=1024 * 1024, files=2)
    assert not path.parent.exists(), "nothing is created before the first line"
    written = _write(handler, 10)
    assert [p.name for p in path.parent.iterdir()] == ["state-change.log"]
    assert path.read_text().splitlines() == written


@pytest.mark.parametrize(("text", "size"), [
    ("52428800", 50 * 1024 * 1024), ("50MB", 50 * 1024 * 1024), ("50mb", 50 * 1024 * 1024),
    ("512KB", 512 * 1024), ("512K", 512 * 1024), ("1GiB", 1024 ** 3), (" 2 MB ", 2 * 1024 ** 2),
])
def test_sizes_parse_as_log4j_writes_them(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "why"), [
    ("", "is not a size"), ("fifty", "is not a size"), ("-1", "is not a size"),
    ("1.5MB", "is not a size"), ("50 TB", "is not a size"), ("0", "from 1024"),
    ("1023", "from 1024"), ("2048GB", "to 1099511627776"),
])
def test_bad_sizes_are_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_size(text)


@given(st.integers(min_value=0, max_value=2 * 1024 ** 4),
       st.sampled_from([("", 1), ("K", 1024), ("kb", 1024), ("M", 1024 ** 2),
                        ("MiB", 1024 ** 2), ("g", 1024 ** 3), ("GB", 1024 ** 3)]))
def test_a_size_is_its_number_times_its_unit_or_refused(number: int,
                                                        unit: tuple[str, int]) -> None:
    suffix, factor = unit
    size = number * factor
    if MIN_MAX_BYTES <= size <= MAX_MAX_BYTES:
        assert parse_size(f"{number}{suffix}") == size
    else:
        with pytest.raises(ValueError, match="bytes: from"):
            parse_size(f"{number}{suffix}")


@pytest.mark.parametrize(("max_bytes", "files", "why"), [
    (1024, 1, "from 2"), (1024, 101, "to 100"), (0, 3, "from 1024"),
])
def test_the_handler_refuses_an_unbounded_setting(tmp_path: Path, max_bytes: int, files: int,
                                                  why: str) -> None:
    with pytest.raises(ValueError, match=why):
        StateChangeFile(tmp_path / "state-change.log", max_bytes=max_bytes, files=files)


def _batch_logger(handler: logging.Handler) -> logging.Logger:
    logger = logging.getLogger("kcontrol.test.state.change.batch")
    logger.handlers.clear()
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return logger


class _Count(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.records = 0

    def filter(self, record: logging.LogRecord) -> bool:
        self.records += 1
        return True


def test_lines_logged_at_once_are_one_record_and_read_as_one_record_a_line(
        tmp_path: Path) -> None:
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    batched, single = (StateChangeFile(tmp_path / name / "state-change.log")
                       for name in ("batched", "single"))
    for handler in (batched, single):
        handler.setFormatter(logging.Formatter(fmt))
    count = _Count()
    batched.addFilter(count)
    lines = [f"[broker 4] replica t{i:05d}-7: follower of 5 in leader epoch {i}" for i in range(300)]
    logger = _batch_logger(batched)
    try:
        log_lines(logger, logging.INFO, lines)
        logger.removeHandler(batched)
        logger.addHandler(single)
        for line in lines:
            logger.info("%s", line)
    finally:
        logger.removeHandler(single)
        batched.close()
        single.close()
    assert count.records == 1, "one record for the lot"
    got, want = ((tmp_path / name / "state-change.log").read_text().splitlines()
                 for name in ("batched", "single"))
    assert len(got) == len(lines)
    assert [g.split(" ", 2)[2] for g in got] == [w.split(" ", 2)[2] for w in want], \
        "each line as one record a line gives it, but for the time"
    assert all(g.startswith("20") and " INFO kcontrol.test.state.change.batch: " in g
               for g in got)


def test_lines_go_one_record_each_where_a_handler_is_not_the_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("kcontrol.test.state.change.foreign")
    logger.setLevel(logging.INFO)
    with caplog.at_level(logging.INFO, logger=logger.name):
        log_lines(logger, logging.INFO, ["one", "two", "three"])
    assert [r.getMessage() for r in caplog.records] == ["one", "two", "three"]
    log_lines(logger, logging.DEBUG, ["not logged"])  # under the level: nothing
    assert len(caplog.records) == 3


def test_a_formatter_that_changes_the_message_formats_each_line(tmp_path: Path) -> None:
    handler = StateChangeFile(tmp_path / "state-change.log")
    handler.setFormatter(logging.Formatter("<%(message).4s|%(levelname)s>"))
    logger = _batch_logger(handler)
    try:
        log_lines(logger, logging.WARNING, ["abcdefgh", "ijklmnop"])
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert (tmp_path / "state-change.log").read_text().splitlines() == [
        "<abcd|WARNING>", "<ijkl|WARNING>"]


@given(st.lists(st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126),
                                 min_size=0, max_size=300), min_size=1, max_size=40),
                min_size=1, max_size=12),
       st.integers(min_value=1024, max_value=4096), st.integers(min_value=2, max_value=4))
def test_batches_keep_the_bound_and_the_newest_lines_in_order(
        batches: list[list[str]], max_bytes: int, files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state-change.log"
        handler = StateChangeFile(path, max_bytes=max_bytes, files=files)
        logger = _batch_logger(handler)
        try:
            for batch in batches:
                log_lines(logger, logging.INFO, batch)
        finally:
            logger.removeHandler(handler)
            handler.close()
        written = [line for batch in batches for line in batch]
        kept: list[str] = []
        for n in range(files - 1, -1, -1):
            name = path.with_name(path.name + (f".{n}" if n else ""))
            if name.exists():
                text = name.read_text()
                assert len(text) < max_bytes or text.count("\n") == 1, \
                    "a file past the bound holds a single line"
                kept += text.splitlines()
        assert not path.with_name(path.name + f".{files}").exists()
        assert kept, "the newest lines are kept"
        assert kept == written[-len(kept):], "the newest lines, in order, none missing"
