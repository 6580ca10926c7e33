"""The KRaft campaign's ``DIR/proxy.log`` is bounded: it rotates, keeping the newest lines."""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.kraft_chaos.runner import PROXY_LOG_FILES, PROXY_LOG_MAX_BYTES, log_to_file

NAME = "kcontrol.test.proxy_log"


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger(NAME)
    yield log
    for h in list(log.handlers):
        log.removeHandler(h)
        h.close()


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_the_log_rotates_within_its_bound_and_keeps_the_newest_lines(
        tmp_path: Path, logger: logging.Logger) -> None:
    max_bytes, files = 2000, 3
    log_to_file(NAME, tmp_path / "proxy.log", max_bytes=max_bytes, files=files)
    count = 500  # ~100 bytes a line: 50,000 bytes written, 25 times the bound of one file
    for i in range(count):
        logger.info("link controller-3000 -> controller-3001 refused connection %06d", i)

    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["proxy.log", "proxy.log.1", "proxy.log.2"]
    sizes = [(tmp_path / n).stat().st_size for n in written]
    assert all(size <= max_bytes for size in sizes), sizes
    assert sum(sizes) <= files * max_bytes
    newest = _lines(tmp_path / "proxy.log")
    assert newest[-1].endswith(f"connection {count - 1:06d}")
    kept = [line for n in reversed(written) for line in _lines(tmp_path / n)]
    numbers = [int(line.rsplit(" ", 1)[1]) for line in kept]
    # the kept lines are the newest ones, in order, none missing between them
    assert numbers == list(range(count - len(numbers), count))
    assert numbers[0] > 0  # the oldest were dropped


def test_the_campaign_default_is_a_rotating_file_of_bounded_size(
        tmp_path: Path, logger: logging.Logger) -> None:
    log_to_file(NAME, tmp_path / "proxy.log")
    (handler,) = logger.handlers
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    assert handler.maxBytes == PROXY_LOG_MAX_BYTES > 0
    assert handler.backupCount == PROXY_LOG_FILES - 1 >= 1
    assert not logger.propagate
    assert not (tmp_path / "proxy.log").exists()  # opened only on the first record
    logger.info("first")
    assert _lines(tmp_path / "proxy.log")[-1].endswith("INFO first")


def test_a_second_call_replaces_the_handler(tmp_path: Path, logger: logging.Logger) -> None:
    log_to_file(NAME, tmp_path / "a.log")
    log_to_file(NAME, tmp_path / "b.log")
    assert len(logger.handlers) == 1
    logger.info("to b")
    assert not (tmp_path / "a.log").exists()
    assert _lines(tmp_path / "b.log")[-1].endswith("to b")


@pytest.mark.parametrize(("max_bytes", "files"), [(0, 3), (1000, 1), (-5, 0)])
def test_a_bound_that_bounds_nothing_is_refused(tmp_path: Path, max_bytes: int,
                                                files: int) -> None:
    with pytest.raises(ValueError, match="log_to_file"):
        log_to_file(NAME, tmp_path / "proxy.log", max_bytes=max_bytes, files=files)
    handlers = logging.getLogger(NAME).handlers
    assert not [h for h in handlers if isinstance(h, logging.FileHandler)]
    assert not (tmp_path / "proxy.log").exists()
