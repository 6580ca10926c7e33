"""The admin-socket operations a controller node answers for the audit, each read on the
node's event thread (``RaftNodeShell.call``) so that what it returns is one consistent
moment of the controller:

* ``image`` -- ``{"node_id", "active", "epoch", "committed_offset", "replayed_to",
  "high_watermark", "committed": page, "image": page}``: the committed image and (on the
  active controller) the image with its uncommitted records, as pages of snapshot records
  (``images``). ``{"start": n, "sha256": s}`` asks for a later page of the image whose
  digest is ``s``: the node keeps the few lists it encoded last, so the pages of one image
  add up even while the controller moves on.
* ``records_at`` -- ``{"offsets": [...]}`` -> ``{"records": {offset: hex | null}}``: the
  committed metadata records at those offsets (null for a control record, a compacted or
  uncommitted offset). The audit reads the registration records that brokers' epochs name.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_audit.images import ImagePages, encoded_records
from adapters.raft_node.admin import AdminError
from adapters.raft_node.record_bytes import encoded

CACHED_IMAGES = 8
MAX_OFFSETS = 1_000
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

    return {"image": image, "records_at": records_at}


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
