"""A metadata image on the admin socket: its snapshot records (the smallest record list that
rebuilds it, in a fixed order, so equal images give equal lists), each encoded as on the
metadata log and sent as hex, a page at a time (an admin line is bounded), with a SHA-256
of all of them so that two nodes' images are compared without sending either."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from fsm.kraft.image import MetadataImage
from fsm.kraft.image.snapshot import image_from_records, snapshot_records
from fsm.kraft.records.codec import decode_record, encode_record

PAGE_RECORDS = 2_000
"""Records per ``image`` answer (a broker or topic record is well under 200 bytes encoded,
so a page stays far below the admin client's line bound)."""
MAX_RECORDS = 10_000_000
"""The most records the auditor reads of one image."""


def encoded_records(image: MetadataImage) -> list[bytes]:
    return [encode_record(r) for r in snapshot_records(image)]


def digest(records: Sequence[bytes]) -> str:
    h = hashlib.sha256()
    for r in records:
        h.update(len(r).to_bytes(4, "big"))
        h.update(r)
    return h.hexdigest()


def page(records: Sequence[bytes], start: int, limit: int = PAGE_RECORDS) -> dict[str, Any]:
    """``{"count", "sha256", "start", "records": [hex...]}`` for ``records[start:start+limit]``."""
    chunk = records[start:start + limit]
    return {"count": len(records), "sha256": digest(records), "start": start,
            "records": [r.hex() for r in chunk]}


def read_image(fetch: Callable[[int], dict[str, Any]]) -> tuple[MetadataImage, str]:
    """The image whose pages ``fetch(start)`` answers, and its digest; ``ValueError`` if the
    pages do not add up (the image changed between two pages, or a record does not decode)."""
    raw: list[bytes] = []
    first = fetch(0)
    want, sha = first["count"], first["sha256"]
    if not 0 <= want <= MAX_RECORDS:
        raise ValueError(f"an image of {want} records is beyond the audit's bound")
    answer = first
    while True:
        if answer["sha256"] != sha or answer["count"] != want:
            raise ValueError("the image changed while it was read")
        raw += [bytes.fromhex(h) for h in answer["records"]]
        if len(raw) >= want or not answer["records"]:
            break
        answer = fetch(len(raw))
    if len(raw) != want or digest(raw) != sha:
        raise ValueError(f"read {len(raw)} of {want} records; the digest does not match")
    return image_from_records(decode_record(r) for r in raw), sha


class ImagePages:
    """The few encoded images a node answered last, by digest, so that the later pages the
    auditor asks for belong to the same image even while the node moves on."""

    def __init__(self, keep: int = 8) -> None:
        self._keep = keep
        self._lists: dict[str, list[bytes]] = {}

    def first(self, records: list[bytes]) -> dict[str, Any]:
        answer = page(records, 0)
        self._lists.pop(answer["sha256"], None)
        self._lists[answer["sha256"]] = records
        while len(self._lists) > self._keep:
            del self._lists[next(iter(self._lists))]
        return answer

    def later(self, sha: object, start: object) -> dict[str, Any]:
        """The page from ``start`` of image ``sha``; ``KeyError``/``ValueError`` if it is not
        kept or ``start`` is not an offset."""
        if not isinstance(start, int) or start < 0:
            raise ValueError(f"start {start!r}: a non-negative integer")
        records = self._lists.get(sha) if isinstance(sha, str) else None
        if records is None:
            raise KeyError(f"no image with sha256 {sha!r} is kept any more; read again")
        return page(records, start)


def pages_of(first: dict[str, Any], ask_later: Callable[[int, str], dict[str, Any]]
             ) -> Callable[[int], dict[str, Any]]:
    """A ``fetch`` for ``read_image``: ``first`` for offset 0, then ``ask_later(start, sha)``."""

    def fetch(start: int) -> dict[str, Any]:
        return first if start == 0 else ask_later(start, first["sha256"])

    return fetch
