"""Images on the admin socket: paged, digested, rebuilt equal; a page from another image or
a record missing is refused, never merged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.kraft_audit import images
from adapters.kraft_audit.collect import SparseLog
from adapters.kraft_audit.images import ImagePages, encoded_records, pages_of, read_image
from fsm.kraft.image import MetadataImage
from fsm.kraft.records.values import PartitionRecord, RegisterBrokerRecord, TopicRecord


def image_of(brokers: int, topics: int) -> MetadataImage:
    img = MetadataImage()
    for b in range(brokers):
        img.apply(RegisterBrokerRecord(b, bytes([b + 1]) * 16, b + 10))
    for t in range(topics):
        tid = bytes([200 + t]) * 16
        img.apply(TopicRecord(f"t{t}", tid))
        img.apply(PartitionRecord(0, tid, (0,), (0,), leader=0))
    return img


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 5), st.integers(0, 5), st.integers(1, 4))
def test_pages_rebuild_an_equal_image(brokers: int, topics: int, per_page: int) -> None:
    img = image_of(brokers, topics)
    records = encoded_records(img)
    first = images.page(records, 0, per_page)
    asked: list[int] = []

    def later(start: int, sha: str) -> dict:
        asked.append(start)
        assert sha == first["sha256"]
        return images.page(records, start, per_page)

    got, sha = read_image(pages_of(first, later))
    assert got == img and sha == first["sha256"]
    n = first["count"]
    assert asked == list(range(per_page, n, per_page))


def test_a_page_of_another_image_is_refused() -> None:
    pages = ImagePages()
    a = pages.first(encoded_records(image_of(2, 0)))
    b_records = encoded_records(image_of(3, 0))
    one = images.page(pages._lists[a["sha256"]], 0, 1)
    with pytest.raises(ValueError, match="changed"):
        read_image(pages_of(one, lambda start, sha: images.page(b_records, start, 1)))


def test_a_missing_record_is_refused() -> None:
    recs = encoded_records(image_of(3, 1))
    first = images.page(recs, 0)
    first["records"] = first["records"][:-1]  # one record lost on the way
    with pytest.raises(ValueError, match="digest|records"):
        read_image(pages_of(first, lambda start, sha: {**images.page(recs, start),
                                                       "records": []}))


def test_a_forgotten_image_is_a_clear_error() -> None:
    pages = ImagePages(keep=1)
    a = pages.first(encoded_records(image_of(1, 0)))
    pages.first(encoded_records(image_of(2, 0)))
    with pytest.raises(KeyError, match="read again"):
        pages.later(a["sha256"], 1)
    with pytest.raises(ValueError, match="start"):
        pages.later(a["sha256"], -1)


def test_sparse_log_indexes_like_the_log() -> None:
    log = SparseLog(5, {3: "r3"})
    assert len(log) == 5 and log[3] == "r3" and log[0] is None
    assert log[2:4] == [None, "r3"]
    with pytest.raises(IndexError):
        log[5]
