"""The admin-socket operations a controller node answers for the audit, each read on the
node's event thread (``RaftNodeShell.call``) so that what it returns is one consistent
moment of the controller:

* ``image`` -- ``{"node_id", "active", "epoch", "committed_offset", "replayed_to",
  "high_watermark", "waiting_answers", "committed": page, "image": page}``: the committed
  image and (on the active controller) the image with its uncommitted records, as pages of
  snapshot records (``images``); ``waiting_answers`` counts answers held back for a record
  below the high watermark (already committed: none should be). ``{"start": n, "sha256": s}`` asks for a later page of the image whose
  digest is ``s``: the node keeps the few lists it encoded last, so the pages of one image
  add up even while the controller moves on.
* ``records_at`` -- ``{"offsets": [...]}`` -> ``{"records": {offset: hex | null}}``: the
  committed metadata records at those offsets (null for a control record, a compacted or
  uncommitted offset). The audit reads the registration records that brokers' epochs name.
* ``log_digests`` -- ``{"from": n, "max_records": m}`` -> ``{"log_start", "log_end",
  "high_watermark", "snapshot": [offset, epoch] | null, "next", "batches": [[base offset,
  epoch, control, [digest, ...](, record count)], ...]}``: the committed batches from the one
  holding ``n`` (or the log start) on, whole, at most about ``m`` records, each metadata
  record as a short digest of its bytes (a control batch: one digest, and its record count). The KRaft fault
  campaign's ledger of committed records compares them (``adapters.kraft_chaos.committed``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_audit.images import ImagePages, encoded_records
from adapters.raft_node.admin import AdminError
from adapters.raft_node.record_bytes import encoded

CACHED_IMAGES = 8
MAX_OFFSETS = 1_000
MAX_DIGESTS = 20_000
DIGEST_HEX = 16
READ_BATCHES = 256
TIMEOUT_S = 30.0

AdminOp = Callable[[dict[str, Any]], dict[str, Any]]


def replayed_to(glue: Any) -> int:
    """The last offset the controller has replayed: the glue's, which passes the quorum's
    control batches that the controller never sees (``model_check.kraft.view`` alike)."""
    return max(glue.controller.committed_offset, glue.applied - 1)


def audit_ops(shell: Any) -> dict[str, AdminOp]:
    """``image`` and ``records_at`` for a node whose shell runs ``ControllerOnRaft``."""
    pages = ImagePages(CACHED_IMAGES)

    def image(req: dict[str, Any]) -> dict[str, Any]:
        if "sha256" in req:
            return {"page": later_page(pages, req)}

        def read() -> dict[str, Any]:
            glue = shell.runner
            c = glue.controller
            committed = encoded_records(c.committed)
            return {"node_id": shell.status.node_id, "active": c.active, "epoch": c.epoch,
                    "committed_offset": c.committed_offset, "replayed_to": replayed_to(glue),
                    "high_watermark": shell.status.high_watermark,
                    "waiting_answers": c.answers_waiting_below(shell.status.high_watermark),
                    "committed_records": committed,
                    "image_records": encoded_records(c.image) if c.active else None}

        got = _wait(shell.call(read))
        answer = {k: v for k, v in got.items() if not k.endswith("_records")}
        answer["committed"] = pages.first(got["committed_records"])
        if got["image_records"] is not None:
            answer["image"] = pages.first(got["image_records"])
        return answer

    def records_at(req: dict[str, Any]) -> dict[str, Any]:
        offsets = req.get("offsets")
        if (not isinstance(offsets, list) or len(offsets) > MAX_OFFSETS
                or not all(isinstance(o, int) and o >= 0 for o in offsets)):
            raise AdminError(f"offsets: a list of at most {MAX_OFFSETS} non-negative integers")

        def read() -> dict[str, Any]:
            hw = shell.status.high_watermark
            out: dict[str, str | None] = {}
            for o in offsets:
                out[str(o)] = None
                if o >= hw:
                    continue
                try:
                    got = shell.port.log.read(o, hw, 1)  # the batch holding ``o``
                except ValueError:  # OffsetOutOfRange included
                    continue  # below the log start: in a snapshot now
                for batch in got:
                    if not batch.control and batch.base_offset <= o < batch.end_offset:
                        out[str(o)] = encoded(batch.records)[o - batch.base_offset].hex()
            return {"records": out}

        return _wait(shell.call(read))

    def log_digests(req: dict[str, Any]) -> dict[str, Any]:
        start = req.get("from", 0)
        limit = req.get("max_records", 5_000)
        if not isinstance(start, int) or start < 0 or not isinstance(limit, int) \
                or not 0 < limit <= MAX_DIGESTS:
            raise AdminError(f"from: a non-negative integer; max_records: 1-{MAX_DIGESTS}")
        return _wait(shell.call(lambda: committed_digests(shell, start, limit)))

    return {"image": image, "records_at": records_at, "log_digests": log_digests}


def record_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_HEX]


def committed_digests(shell: Any, start: int, limit: int) -> dict[str, Any]:
    """``log_digests``' answer, read on the node's event thread."""
    log = shell.port.log
    summary = log.summary()
    hw = shell.status.high_watermark
    at = max(start, summary.log_start_offset)
    out: list[list[Any]] = []
    count = 0
    while at < hw and count < limit:
        got = log.read(at, hw, READ_BATCHES)
        if not got:
            break
        for b in got:
            if b.end_offset > hw or count >= limit:
                break
            if b.control:
                out.append([b.base_offset, b.epoch, True,
                            [record_digest(f"control:{len(b.records)}".encode())],
                            len(b.records)])
            else:
                out.append([b.base_offset, b.epoch, False,
                            [record_digest(r) for r in encoded(b.records)]])
            count += len(b.records)
            at = b.end_offset
        else:
            continue
        break
    snap = summary.snapshot_id
    return {"log_start": summary.log_start_offset, "log_end": summary.end_offset,
            "high_watermark": hw, "snapshot": None if snap is None else [snap.offset, snap.epoch],
            "next": at, "batches": out}


def later_page(pages: ImagePages, req: dict[str, Any]) -> dict[str, Any]:
    """The page ``req`` asks for (``{"start", "sha256"}``), or the refusal that says why."""
    try:
        return pages.later(req.get("sha256"), req.get("start"))
    except (KeyError, ValueError) as exc:
        raise AdminError(str(exc).strip("'\"")) from None


def _wait(future: Future[Any]) -> Any:
    try:
        return future.result(TIMEOUT_S)
    except FutureTimeout:
        raise AdminError(f"the node's event thread did not answer in {TIMEOUT_S:.0f} s") from None
