"""``KRaftCampaign``: start a KRaft cluster (3 controllers, the brokers) behind the proxy mesh,
with one controller's metadata directory on a small filesystem, run the plan, stop
everything.

One step (``KRaftCampaign.step``):

1. the admin action is sent (``Workload.run``, from a thread) and, meanwhile, the background
   thread sends more;
2. the fault is injected, measured and undone (``faults.Faults.inject``);
3. the campaign waits, bounded, until the cluster settles (``observe.unsettled`` empty and
   every acknowledged operation done; past their deadline operations are *stuck*);
4. the live audit (``adapters.kraft_audit.audit``): the catalogue's state invariants on two
   readings, its transition invariants between them and -- those that hold across any
   number of steps (``ACROSS_FAULTS``) -- from the previous fault's reading to this one,
   its quiescent ones; the fault's own expectations (the zombie stepped down, ...);
5. the ledger of committed records extended and every controller's log compared with it
   (``committed``); the acknowledged topics looked for in the committed image.

Everything is bounded: each wait has a deadline, the campaign a time limit. The nodes die with
the campaign's process (``die_with_parent``); ``close`` resumes paused processes, heals the
mesh, restores the disks, stops every node, closes the mesh and unmounts the disks -- also on
Ctrl-C and SIGTERM (``run_kraft_campaign``).
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from adapters.campaign.finish import run_to_end
from adapters.campaign.settings import CampaignSettings
from adapters.campaign.steps import StepLog
from adapters.chaos.report import FaultRecord
from adapters.cluster.kraft_launcher import KRaftCluster, KRaftClusterError
from adapters.kraft_audit.audit import audit
from adapters.kraft_audit.collect import Reading
from adapters.kraft_audit.targets import Target
from adapters.kraft_chaos import committed
from adapters.kraft_chaos.cluster import build_cluster, dismantle
from adapters.kraft_chaos.faults import Expectation, FaultError, Faults
from adapters.kraft_chaos.observe import ClusterView, read_view, unsettled
from adapters.kraft_chaos.plan import KStep, make_plan
from adapters.kraft_chaos.report import KRaftReport
from adapters.kraft_chaos.workload import BUDGET_S, Background, Workload
from fsm.kraft.controller import requests as rq
from invariants.kraft import CATALOGUE
from invariants.registry import TRANSITION

POLL_S = 0.2
PROVOKE_PARTITIONS = 50
LOST_READINGS = 3
LOST_RECHECK_S = 1.0
ACROSS_FAULTS = ("epochs_never_decrease", "broker_epochs_rise_and_retries_keep_them")
"""The transition invariants that hold between any two readings, however far apart (a
leader that changed twice may be the same again: ``leader_epoch_moves_with_the_leader``
holds only between neighbouring readings)."""


PROXY_LOGGER = "kcontrol.kraft_chaos.proxy"
PROXY_LOG_MAX_BYTES = 10 * 1024 * 1024
PROXY_LOG_FILES = 3
"""``DIR/proxy.log`` rotates: at most ``PROXY_LOG_FILES`` files of ``PROXY_LOG_MAX_BYTES``
(``proxy.log``, ``proxy.log.1``, ``proxy.log.2``), the newest lines kept."""


def log_to_file(name: str, path: Path, max_bytes: int = PROXY_LOG_MAX_BYTES,
                files: int = PROXY_LOG_FILES) -> None:
    """``name``'s records to ``path`` only (the mesh narrates every refused connection), in
    at most ``files`` files of ``max_bytes`` each: when a record would take ``path`` past
    ``max_bytes`` it becomes ``path.1`` (``.1`` becomes ``.2``, ...) and the oldest beyond
    ``files`` is deleted, so a long campaign's log stays bounded."""
    if max_bytes < 1 or files < 2:
        raise ValueError(f"log_to_file: max_bytes {max_bytes} must be positive and files "
                         f"{files} at least 2 (the file being written and one rotated)")
    logger = logging.getLogger(name)
    for h in list(logger.handlers):
        logger.removeHandler(h)
        h.close()
    # opened once the directory is prepared
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes,
                                                   backupCount=files - 1, encoding="utf-8",
                                                   delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


class KRaftCampaignError(RuntimeError):
    """The campaign cannot go on (the cluster did not start)."""


@dataclass
class KSettings(CampaignSettings):
    controllers: int = 3
    fetch_timeout_ms: int = 2000
    election_timeout_ms: int = 1000
    heartbeat_ms: int = 500
    snapshot_every: int = 500
    background: bool = True
    disks: bool = True
    network: bool = True

    @property
    def fetch_s(self) -> float:
        return self.fetch_timeout_ms / 1000.0

    @property
    def recovery_bound_s(self) -> float:
        return 4 * max(self.session_s, self.fetch_s) + 30.0

    def overrides(self) -> dict[str, str]:
        return {
            "broker.session.timeout.ms": str(self.session_timeout_ms),
            "broker.heartbeat.interval.ms": str(self.heartbeat_ms),
            "controller.quorum.fetch.timeout.ms": str(self.fetch_timeout_ms),
            "controller.quorum.election.timeout.ms": str(self.election_timeout_ms),
            "controller.quorum.election.backoff.max.ms": str(self.election_timeout_ms),
        }


@dataclass
class KRaftCampaign(StepLog):
    settings: KSettings
    console: Console
    on_fault: Callable[[FaultRecord], None] | None = None
    report: KRaftReport = field(init=False)
    cluster: KRaftCluster | None = None
    faults: Faults | None = None
    workload: Workload | None = None
    background: Background | None = None
    ledger: committed.Ledger = field(default_factory=committed.Ledger)
    previous: Reading | None = None
    probes: int = 0
    t0: float = field(default_factory=time.monotonic)

    PROBLEMS_SHOWN = 10

    def __post_init__(self) -> None:
        s = self.settings
        self.report = KRaftReport(s.seed, s.brokers, s.faults, s.session_timeout_ms,
                                  controllers=s.controllers,
                                  started_at=datetime.now(UTC).isoformat(timespec="seconds"))

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        s = self.settings
        built = build_cluster(s.directory, s.controllers, s.brokers, overrides=s.overrides(),
                              snapshot_every=s.snapshot_every, seed=s.seed, disks=s.disks,
                              network=s.network)
        self.cluster = built.cluster
        log_to_file(PROXY_LOGGER, s.directory / "proxy.log")
        self.report.left_out.update(built.left_out)
        for kind, why in built.left_out.items():
            self.say(f"[yellow]{kind} left out: {escape(why)}[/]")
        self.say(f"starting {s.controllers} controllers and {s.brokers} brokers in "
                 f"{s.directory} (session {s.session_timeout_ms} ms, fetch timeout "
                 f"{s.fetch_timeout_ms} ms) ...")
        try:
            view = self.cluster.up(timeout=120.0)
        except KRaftClusterError as exc:
            raise KRaftCampaignError(f"the cluster did not start: {exc}") from exc
        self.say(f"cluster up: controller {view.leader} active in epoch {view.epoch}")
        self.faults = Faults(self.cluster, s.session_s, s.fetch_s, s.recovery_bound_s,
                             mesh=built.mesh, disks=built.disks, provoke=self.provoke)
        self.workload = Workload(self.admin_targets, s.op_s)
        if s.background:
            self.background = Background(self.workload, s.seed + 1, s.brokers)

    def close(self) -> None:
        if self.background is not None:
            self.background.stop()
        f = self.faults
        if f is not None:
            f.resume_all()
            f.heal_all()
            f.restore_disks()
        if self.cluster is not None:
            self.say("stopping the cluster ...")
            with contextlib.suppress(Exception):
                for line in self.cluster.stop():
                    self.say(f"  {escape(line)}")
        if f is not None:
            dismantle(getattr(self.cluster, "mesh", None), f.disks)
        for h in list(logging.getLogger(PROXY_LOGGER).handlers):
            logging.getLogger(PROXY_LOGGER).removeHandler(h)
            h.close()

    def run(self) -> KRaftReport:
        s = self.settings
        self.start()
        assert self.faults is not None
        plan = make_plan(s.seed, s.faults, s.brokers, disks=bool(self.faults.disks),
                         network=self.faults.mesh is not None)
        _, problems = self.settle(time.monotonic() + s.settle_s)
        if problems:
            raise KRaftCampaignError(f"the new cluster did not settle: {'; '.join(problems)}")
        self.check_ledger(0)
        if self.background is not None:
            self.background.start()
        self.run_steps(plan)
        if self.background is not None:
            self.background.stop()
        self.drain()
        return self.report

    def collect(self) -> None:
        """The workload's figures into the report (``run_to_end``, before ``close``)."""
        if self.workload is not None:
            got = self.workload.snapshot()
            self.report.actions_by_kind = got["actions_by_kind"]
            self.report.action_outcomes = got["action_outcomes"]
            self.report.refused_actions = got["refused"]
            self.report.operations = got["operations"]
        if self.background is not None:
            self.report.background_actions = self.background.sent

    # ------------------------------------------------------------------ helpers

    def admin_targets(self) -> list[tuple[str, int]]:
        """Running, unpaused brokers (in a rotating order), then the active controller."""
        c, f = self.cluster, self.faults
        if c is None or f is None:
            return []
        out = [(n.name, n.port) for b, n in sorted(c.brokers.items())
               if n.running and b not in f.paused and b not in f.excluded]
        if out:
            k = self.probes % len(out)
            out = out[k:] + out[:k]
        self.probes += 1
        for n in c.controllers.values():
            if n.running and n.node_id not in f.paused:
                out.append((n.name, n.port))
        return out

    def provoke(self) -> None:
        """Make the controllers write: a topic of ``PROVOKE_PARTITIONS`` partitions created
        and deleted (not counted among the actions)."""
        w = self.workload
        assert w is not None
        self.probes += 1
        name = f"probe-{self.probes}"
        w.call(rq.CreateTopicsRequest((rq.CreatableTopic(name, PROVOKE_PARTITIONS, 2),), ()))
        w.call(rq.DeleteTopicsRequest(names=(name,)))

    def asks(self) -> tuple[dict[int, Any], dict[int, Any]]:
        c = self.cluster
        assert c is not None
        controllers = {n: Target(n, ("controller",), "127.0.0.1", node.admin_port).ask()
                       for n, node in c.controllers.items() if node.running}
        brokers = {n: Target(n, ("broker",), "127.0.0.1", node.admin_port).ask()
                   for n, node in c.brokers.items() if node.running}
        return controllers, brokers

    # ------------------------------------------------------------------ one step

    def step(self, step: KStep) -> FaultRecord:
        w, f = self.workload, self.faults
        assert w is not None and f is not None
        record = FaultRecord(step.index, step.fault.kind.value, "", step.action.describe(),
                             "unknown (still on its way)")
        expectations: list[Expectation] = []
        bg = self.background
        if bg is not None:
            bg.resume()
        # the action goes out and the fault is injected meanwhile, while the controller
        # handles it (the answer is awaited after the fault, bounded)
        sender = threading.Thread(target=lambda: setattr(
            record, "action_outcome", w.run(step.index, step.action)), daemon=True)
        sender.start()
        try:
            expectations = f.inject(step.fault, record)
        except (FaultError, KRaftClusterError, OSError, RuntimeError) as exc:
            self.injection_failed(step, record, exc)
            self.restore_everything()
        sender.join(2 * BUDGET_S)
        if bg is not None and not bg.quiesce():
            record.notes.append("the background action did not end in time")
        view, problems = self.timed_settle(record)
        self.file_unsettled(step, problems)
        rows = self.audit_now()
        for e in expectations:
            detail = e.check(view)
            if detail is not None:
                rows.append({"invariant": e.name, "detail": detail})
        self.file_violations(step, record, rows)
        self.check_ledger(step.index)
        self.file_lost(step, self.lost_topics())
        self.file_record(step, record, view)
        return record

    def progress(self, step: KStep, record: FaultRecord, view: ClusterView) -> None:
        self.progress_line(step, record, (40, 15),
                           f"active {view.active} epoch {view.epoch}, "
                           f"{len(view.partitions())} partitions, ledger {self.ledger.end}")

    def settle(self, deadline: float) -> tuple[ClusterView, list[str]]:
        c, w = self.cluster, self.workload
        assert c is not None and w is not None
        while True:
            view = read_view(c, ())
            if view.topics is not None:
                w.progress(view.topics)
            problems = unsettled(c, view)
            if not problems and not w.pending:
                return view, []
            overdue = w.overdue()
            if overdue:
                self.report.stuck.extend(w.give_up(overdue))
            if time.monotonic() >= deadline:
                return view, problems + [f"{len(w.pending)} operation(s) pending"]
            time.sleep(POLL_S)

    def restore_everything(self) -> None:
        c, f = self.cluster, self.faults
        assert c is not None and f is not None
        f.resume_all()
        f.heal_all()
        f.restore_disks()
        for node in c.nodes():
            if not node.running:
                with contextlib.suppress(KRaftClusterError, OSError, RuntimeError):
                    c.start_node(node.node_id)

    # ------------------------------------------------------------------ checks

    def audit_now(self) -> list[dict[str, str]]:
        controllers, brokers = self.asks()
        try:
            result = audit(controllers, brokers, settle_s=10.0, catch_up_s=10.0)
        except (ConnectionError, OSError, ValueError) as exc:
            return [{"invariant": "audit_readable", "detail": str(exc)}]
        rows = [{"invariant": v.invariant, "detail": v.detail} for v in result.violations]
        if self.previous is not None:
            before, after = self.previous.view, result.readings[0].view
            for inv in CATALOGUE:
                if inv.kind == TRANSITION and inv.name in ACROSS_FAULTS:
                    rows += [{"invariant": v.invariant, "detail": f"since the last fault: "
                              f"{v.detail}"} for v in inv.check(before, after)]
        self.previous = result.last
        return rows

    def lost_topics(self) -> list[str]:
        """The acknowledged topics the committed image lost -- confirmed by a second reading
        a moment later (a controller just elected may serve its image before it caught up
        with its own log's committed records)."""
        c, w = self.cluster, self.workload
        assert c is not None and w is not None
        found: list[str] = []
        for attempt in range(LOST_READINGS):
            if attempt:
                time.sleep(LOST_RECHECK_S)
            read_at = time.monotonic()
            view = read_view(c, (), metadata=False)
            if view.topics is None:
                continue
            found = w.lost(view.topics, read_at)
            if not found:
                return []
        return found

    def check_ledger(self, step: int) -> None:
        c = self.cluster
        assert c is not None
        view = read_view(c, (), metadata=False)
        controllers, _ = self.asks()
        found: list[dict[str, Any]] = []
        try:
            if view.active is not None and view.active in controllers:
                log = committed.read_log(f"controller {view.active}", controllers[view.active],
                                         self.ledger.end)
                found += self.ledger.extend(log)
            for n, ask in sorted(controllers.items()):
                found += self.ledger.compare(committed.read_log(f"controller {n}", ask))
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            self.say(f"[yellow]the ledger could not read a log: {escape(str(exc))}[/]")
        seen = {(r["node"], r["offset"], r["detail"]) for r in self.report.lost_committed_records}
        for row in found:
            if (row["node"], row["offset"], row["detail"]) not in seen:
                self.report.lost_committed_records.append({"step": step, **row})
        led = self.ledger
        self.report.ledger = {"end_offset": led.end, "batches": len(led.batches),
                              "records": led.records, "skipped_into_snapshots": led.skipped,
                              "full": led.full}


def run_kraft_campaign(settings: KSettings, console: Console | None = None,
                       json_path: Path | None = None,
                       on_fault: Callable[[FaultRecord], None] | None = None
                       ) -> tuple[int, KRaftReport]:
    """Run, report, stop everything (also on Ctrl-C/SIGTERM/SIGHUP). Returns (exit code,
    report): 0 only when the report is ok."""
    console = console or Console(width=max(Console().width, 160))
    campaign = KRaftCampaign(settings, console, on_fault)
    return run_to_end(campaign, console, json_path, (KRaftCampaignError, KRaftClusterError))


__all__ = ["ACROSS_FAULTS", "KRaftCampaign", "KRaftCampaignError", "KSettings",
           "run_kraft_campaign"]
