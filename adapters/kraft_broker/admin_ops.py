"""The broker's admin-socket operations (``adapters.raft_node.admin``'s line-delimited JSON on
``kcontrol.admin.port``, loopback): what tools and the audit read of a running broker, each
read on the core's event thread (``BrokerShell.call``) so an answer is one moment of it.

* ``status`` -- the broker's ``status()``: lifecycle state, broker epoch, metadata offset,
  fenced, replicas and leaderships, the active controller, the observer's high watermark;
* ``broker_state`` -- what ``kcontrol audit`` reads (``adapters.kraft_audit.collect``):
  ``{"broker_id", "alive", "state", "incarnation_id" (hex), "epoch", "offset", "image": page,
  "leaders": [[topic id hex, partition, leader epoch], ...]}``, the replayed image as pages of
  its snapshot records (``kraft_audit.images``);
* ``broker_image`` -- ``{"start", "sha256"}``: a later page of an image ``broker_state`` gave;
* ``wait_offset`` -- ``{"offset", "timeout"}``: answers ``{"metadata_offset", "at"}`` as soon
  as the core's published metadata offset is at least ``offset`` (``at``: the wall-clock time
  it saw it, woken by the publication itself: how a benchmark times an image without polling
  the broker); an error after ``timeout`` seconds (default 10);
* ``isr_change`` -- ``{"topic", "partition", "isr": [...]}``: what the replication layer would
  say when followers fall behind or catch up (there is no data replication here):
  ``IsrChangesWanted`` to the core, which as the partition's leader sends AlterPartition to
  the active controller. Answers ``{"isr", "partition_epoch"}`` once the broker holds that ISR
  (the controller's answer or the committed record), within ``timeout`` seconds (default 10).
  The replicas it takes out count as fallen behind: the ISR expander (``isr_expander``) keeps
  them out of that partition's ISR for ``hold`` seconds (default 30, at most 600; 0: none).

In combined mode the node's ``QuorumNode`` already serves an admin socket: these operations
join its own there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_audit.images import ImagePages, encoded_records
from adapters.kraft_audit.node_ops import later_page
from adapters.raft_node.admin import AdminError
from fsm.kraft.broker import KRaftBroker, Role
from fsm.kraft.broker.events import IsrChangesWanted, IsrChangeWanted, PartitionKey

TIMEOUT_S = 30.0
CACHED_IMAGES = 8
MAX_WAIT_S = 60.0
POLL_S = 0.02

AdminOp = Callable[[dict[str, Any]], dict[str, Any]]
Hold = Callable[[PartitionKey, Iterable[int], float], None]
DEFAULT_HOLD_S = 30.0
MAX_HOLD_S = 600.0


def broker_ops(on_core: Callable[[Callable[[KRaftBroker], Any]], Future[Any]],
               status: Callable[[], dict[str, Any]],
               submit: Callable[[object], bool],
               hold: Hold | None = None,
               wait_offset: Callable[[int, float], int] | None = None) -> dict[str, AdminOp]:
    """``hold(key, brokers, seconds)``: the ISR expander's (None: no expander);
    ``wait_offset(offset, seconds)``: the shell's wait for its published metadata offset
    (None: no ``wait_offset`` op)."""
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

    def isr_change(req: dict[str, Any]) -> dict[str, Any]:
        topic, partition, isr = req.get("topic"), req.get("partition"), req.get("isr")
        timeout = req.get("timeout", 10)
        hold_s = req.get("hold", DEFAULT_HOLD_S)
        if not isinstance(topic, str) or not isinstance(partition, int) or \
                not isinstance(isr, list) or not all(isinstance(b, int) for b in isr) or \
                not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_WAIT_S or \
                not isinstance(hold_s, (int, float)) or not 0 <= hold_s <= MAX_HOLD_S:
            raise AdminError("isr_change wants topic (a name), partition (an integer), isr (a "
                             f"list of broker ids), timeout (0-{MAX_WAIT_S:g} s) and hold "
                             f"(0-{MAX_HOLD_S:g} s)")
        wanted = tuple(isr)

        def find(core: KRaftBroker) -> Any:
            t = core.image.topic(topic)
            if t is None or partition not in t.partitions:
                raise AdminError(f"no partition {topic}-{partition} in the broker's image")
            r = core.replica(t.topic_id, partition)
            if r is None or r.role is not Role.LEADER:
                raise AdminError(f"broker {core.broker_id} does not lead {topic}-{partition}")
            return t.topic_id, r.isr

        topic_id, before = _wait(on_core(find))
        fallen = [b for b in before if b not in wanted]
        if hold is not None and fallen and hold_s > 0:
            hold((topic_id, partition), fallen, float(hold_s))
        if not submit(IsrChangesWanted((IsrChangeWanted(topic_id, partition, wanted),))):
            raise AdminError("the broker is not running")
        deadline = time.monotonic() + timeout
        while True:
            r = _wait(on_core(lambda core: core.replica(topic_id, partition)))
            if r is not None and tuple(r.isr) == wanted:
                return {"isr": list(r.isr), "partition_epoch": r.partition_epoch}
            if r is None or r.role is not Role.LEADER or time.monotonic() >= deadline:
                raise AdminError(f"{topic}-{partition}: ISR {list(r.isr) if r else None}, "
                                 f"not {list(wanted)} (the controller refused, or not yet)")
            time.sleep(POLL_S)

    def wait_for_offset(req: dict[str, Any]) -> dict[str, Any]:
        offset, timeout = req.get("offset"), req.get("timeout", 10)
        if not isinstance(offset, int) or isinstance(offset, bool) or \
                not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_WAIT_S:
            raise AdminError("wait_offset wants offset (an integer) and timeout "
                             f"(0-{MAX_WAIT_S:g} s)")
        assert wait_offset is not None
        try:
            reached = wait_offset(offset, float(timeout))
        except TimeoutError:
            raise AdminError(f"metadata offset {offset} not replayed within {timeout} s") \
                from None
        return {"metadata_offset": reached, "at": time.time()}

    ops = {"status": lambda req: status(), "broker_state": broker_state,
           "broker_image": broker_image, "isr_change": isr_change}
    if wait_offset is not None:
        ops["wait_offset"] = wait_for_offset
    return ops


def _wait(future: Future[Any]) -> Any:
    try:
        return future.result(TIMEOUT_S)
    except FutureTimeout:
        raise AdminError(f"the broker's event thread did not answer in {TIMEOUT_S:.0f} s") \
            from None
    except RuntimeError as exc:
        raise AdminError(str(exc)) from None
