"""The broker's admin-socket operations (``adapters.raft_node.admin``'s line-delimited JSON on
``kcontrol.admin.port``, loopback): what tools and the audit read of a running broker, each
read on the core's event thread (``BrokerShell.call``) so an answer is one moment of it.

* ``status`` -- the broker's ``status()``: lifecycle state, broker epoch, metadata offset,
  fenced, replicas and leaderships, the active controller, the observer's high watermark;
* ``broker_state`` -- what ``kcontrol audit`` reads (``adapters.kraft_audit.collect``):
  ``{"broker_id", "alive", "state", "incarnation_id" (hex), "epoch", "offset", "image": page,
  "leaders": [[topic id hex, partition, leader epoch], ...]}``, the replayed image as pages of
  its snapshot records (``kraft_audit.images``);
* ``broker_image`` -- ``{"start", "sha256"}``: a later page of an image ``broker_state`` gave.

In combined mode the node's ``QuorumNode`` already serves an admin socket: these operations
join its own there.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_audit.images import ImagePages, encoded_records
from adapters.kraft_audit.node_ops import later_page
from adapters.raft_node.admin import AdminError
from fsm.kraft.broker import KRaftBroker, Role

TIMEOUT_S = 30.0
CACHED_IMAGES = 8

AdminOp = Callable[[dict[str, Any]], dict[str, Any]]


def broker_ops(on_core: Callable[[Callable[[KRaftBroker], Any]], Future[Any]],
               status: Callable[[], dict[str, Any]]) -> dict[str, AdminOp]:
    pages = ImagePages(CACHED_IMAGES)

    def read(core: KRaftBroker) -> dict[str, Any]:
        inc = core.incarnation_id
        return {
            "broker_id": core.broker_id, "alive": True, "state": core.state.value,
            "incarnation_id": None if inc is None else inc.hex(),
            "epoch": core.broker_epoch, "offset": core.metadata_offset,
            "image_records": encoded_records(core.image),
            "leaders": [[tid.hex(), pid, r.leader_epoch] for (tid, pid), r in core.replicas()
                        if r.role is Role.LEADER],
        }

    def broker_state(req: dict[str, Any]) -> dict[str, Any]:
        got = _wait(on_core(read))
        records = got.pop("image_records")
        return {**got, "image": pages.first(records)}

    def broker_image(req: dict[str, Any]) -> dict[str, Any]:
        return {"page": later_page(pages, req)}

    return {"status": lambda req: status(), "broker_state": broker_state,
            "broker_image": broker_image}


def _wait(future: Future[Any]) -> Any:
    try:
        return future.result(TIMEOUT_S)
    except FutureTimeout:
        raise AdminError(f"the broker's event thread did not answer in {TIMEOUT_S:.0f} s") \
            from None
    except RuntimeError as exc:
        raise AdminError(str(exc)) from None
