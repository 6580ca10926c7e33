"""The state-change log's file rotates by size: written far past its bound, it keeps at most
``files`` files of under ``max_bytes`` each, and the newest lines, in order, with none lost
between the files; sizes parse as log4j writes them and bad ones are refused."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.state_change_file import (
    MAX_MAX_BYTES,
    MIN_MAX_BYTES,
    StateChangeFile,
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
