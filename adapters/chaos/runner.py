"""``Campaign``: start a cluster, run the plan step by step, audit after every fault, stop
everything.

One step (``Campaign.step``):

1. the admin action is written (``Workload.run``) -- the controller handles it while the fault
   below happens;
2. the fault is injected (``inject_*``), and the recovery clock runs from the injection until
   every partition with an in-sync replica on a live broker is led by a live broker. "Live"
   means running (not killed, not paused) and registered in ``/brokers/ids`` with an epoch
   other than the one it had before the fault: a broker that was killed or paused still
   looks registered until its session expires, and must not count as a leader meanwhile;
3. the fault is undone (restart, ``SIGCONT``, the ZooKeeper server started again);
4. the campaign waits, bounded, until the cluster settles: every broker registered, a
   controller, every partition led with a full ISR, every broker's Metadata (v8, over the
   wire) equal to ZooKeeper, and every admin operation complete. Operations past their
   deadline are *stuck*;
5. the audit (``Observer.audit``), the losses (``Workload.lost``) and the fault's own checks
   (a paused broker, woken, registered again under a new epoch; a paused controller was
   replaced under a higher controller epoch).

Everything is bounded: each wait has a deadline, the campaign a time limit. The brokers and
the embedded ensemble are started with ``die_with_parent`` (they die with the campaign's
process); ``close`` resumes paused processes and stops everything in every case.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError
from rich.console import Console
from rich.markup import escape

from adapters.campaign.finish import run_to_end
from adapters.campaign.settings import CampaignSettings
from adapters.campaign.steps import StepLog
from adapters.campaign.timing import hold_pause, time_recovery
from adapters.chaos.observe import (
    Metadata,
    Observer,
    convergence_problems,
    leaderless,
)
from adapters.chaos.plan import CONTROLLER, Fault, FaultKind, Step, make_plan
from adapters.chaos.report import FaultRecord, Report
from adapters.chaos.sessions import SessionExpiryError, expire_session
from adapters.chaos.workload import Workload
from adapters.cluster.launcher import Cluster, ClusterError
from adapters.ensemble import Ensemble, EnsembleError
from adapters.zookeeper.audit import AuditViolation, ZkState
from adapters.zookeeper.connect import ZkAuth, make_client
from fsm import zk_paths

POLL_S = 0.05
PENDING_CONTROLLED_SHUTDOWN = 6  # kafka_server_KafkaServer_BrokerState
STATE_METRIC = "kafka_server_KafkaServer_BrokerState"
ZOMBIE_CHECK = "expired_session_is_replaced"
"""The campaign's own check after a pause or a session expiry: the broker registered again
under a new epoch (a new session), and a controller that lost its session was replaced under
a higher controller epoch."""


class CampaignError(RuntimeError):
    """The campaign cannot go on (the cluster did not start, the ensemble lost for good)."""


@dataclass
class Settings(CampaignSettings):
    zookeeper: str | None = None
    auth: ZkAuth | None = None
    log_config: Path | None = None
    """Every broker's ``--log-config`` (None: the default setup: ``state-change.log`` beside
    each broker's log)."""

    @property
    def recovery_bound_s(self) -> float:
        return 4 * self.session_s + 30.0


@dataclass
class _Expectation:
    """A check for after the cluster settled (the zombie's fate)."""

    broker: int
    old_epoch: int | None
    controller_epoch: int | None = None
    was_controller: bool = False
    registers_again: bool = True
    why: str = "its pause"


@dataclass
class Campaign(StepLog):
    settings: Settings
    console: Console
    report: Report = field(init=False)
    cluster: Cluster | None = None
    client: KazooClient | None = None
    observer: Observer | None = None
    workload: Workload | None = None
    paused: set[int] = field(default_factory=set)
    stale: dict[int, int | None] = field(default_factory=dict)
    """Broker -> the registration epoch it had before the fault: not live while it shows."""
    t0: float = field(default_factory=time.monotonic)
    on_fault: Callable[[FaultRecord], None] | None = None
    """Called with each fault's record once it is audited (``kcontrol chaos``'s progress)."""

    def __post_init__(self) -> None:
        s = self.settings
        self.report = Report(s.seed, s.brokers, s.faults, s.session_timeout_ms,
                             embedded_ensemble=s.zookeeper is None,
                             started_at=datetime.now(UTC).isoformat(timespec="seconds"))

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        s = self.settings
        # the cluster hands the identity to its brokers through their environment (off `ps`)
        self.cluster = Cluster.create(s.directory, s.brokers, zookeeper=s.zookeeper,
                                      session_timeout_ms=s.session_timeout_ms,
                                      die_with_parent=True, zookeeper_auth=s.auth,
                                      log_config=s.log_config)
        what = "a 3-server ZooKeeper ensemble and " if self.cluster.ensemble_dir else ""
        self.say(f"starting {what}{s.brokers} brokers in {s.directory} (session timeout "
                 f"{s.session_timeout_ms} ms) ...")
        try:
            st = self.cluster.up(timeout=120.0)
        except ClusterError as exc:
            raise CampaignError(f"the cluster did not start: {exc}") from exc
        self.report.zookeeper = self.cluster.zookeeper
        self.say(f"cluster up: controller broker {st.controller}, ZooKeeper "
                 f"{self.cluster.zookeeper}")
        self.client = make_client(self.cluster.zookeeper, auth=s.auth, timeout=10.0,
                                  connection_retry={"max_tries": -1, "delay": 0.1,
                                                    "max_delay": 1.0})
        self.client.start(timeout=30.0)
        self.observer = Observer(self.client)
        self.workload = Workload(self.client, s.op_s)

    def close(self) -> None:
        """Resume anything paused, stop every broker and the ensemble, close the client."""
        if self.cluster is not None:
            for b in list(self.paused):
                self._signal(b, signal.SIGCONT)
            self.paused.clear()
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.stop()
                self.client.close()
        if self.cluster is not None:
            self.say("stopping the cluster ...")
            for line in self.cluster.down():
                self.say(f"  {escape(line)}")

    def run(self) -> Report:
        """The whole campaign; ``close`` is the caller's (``run_campaign`` does both)."""
        s = self.settings
        plan = make_plan(s.seed, s.faults, s.brokers, zookeeper_faults=s.zookeeper is None)
        if s.zookeeper is not None:
            self.say("[yellow]--zookeeper given: ZooKeeper servers are not ours to kill; the "
                     "zk-kill faults are left out of the plan[/]")
        self.start()
        st, _, problems = self.settle(time.monotonic() + s.settle_s)
        if problems:
            raise CampaignError(f"the new cluster did not settle: {'; '.join(problems)}")
        self.run_steps(plan)
        self.drain()
        return self.report

    def collect(self) -> None:
        """The workload's figures into the report (``run_to_end``, before ``close``)."""
        if self.workload is not None:
            self.report.actions_by_kind = dict(self.workload.actions_by_kind)
            self.report.refused_actions = list(self.workload.refused)
            self.report.operations = [op.to_json() for op in self.workload.done]

    # ------------------------------------------------------------------ one step

    def step(self, step: Step) -> FaultRecord:
        assert self.workload is not None and self.observer is not None
        before = self.state_now()
        outcome = self.workload.run(step.index, step.action)
        record = FaultRecord(step.index, step.fault.kind.value, "", step.action.describe(),
                             outcome)
        expectations: list[_Expectation] = []
        try:
            self.inject(step.fault, before, record, expectations)
        except (ClusterError, EnsembleError, SessionExpiryError, CampaignError) as exc:
            self.injection_failed(step, record, exc)
            self._restore_everything()
        self.stale.clear()
        st, answers, problems = self.timed_settle(record)
        self.file_unsettled(step, problems)
        rows = self.observer.audit(st, answers) if st is not None else [
            AuditViolation("zookeeper-readable", "-", "ZooKeeper did not answer")]
        rows += self.check_expectations(st, expectations)
        self.file_violations(step, record, [row.to_json() for row in rows])
        if st is not None:
            self.file_lost(step, self.workload.lost(st))
        self.file_record(step, record, st)
        return record

    def progress(self, step: Step, record: FaultRecord, st: ZkState | None) -> None:
        ctrl = st.controller.broker_id if st is not None and st.controller else "-"
        epoch = st.controller_epoch if st is not None else "-"
        parts = len(st.partition_states) if st is not None else 0
        self.progress_line(step, record, (30, 12),
                           f"controller {ctrl} epoch {epoch}, {parts} partitions")

    # ------------------------------------------------------------------ observing

    def state_now(self, timeout: float = 30.0) -> ZkState:
        assert self.observer is not None
        deadline = time.monotonic() + timeout
        while True:
            st = self.observer.state()
            if st is not None:
                return st
            if time.monotonic() >= deadline:
                raise CampaignError(f"ZooKeeper did not answer for {timeout:g} s")
            time.sleep(0.2)

    def running(self) -> set[int]:
        assert self.cluster is not None
        return {b for b in self.cluster.brokers if self.cluster.running(b)} - self.paused

    def live(self, st: ZkState) -> set[int]:
        return {b for b in self.running() & set(st.broker_ids)
                if b not in self.stale or st.broker_epochs.get(b) != self.stale[b]}

    def wait_recovery(self, t0: float, until: Callable[[], bool] | None = None
                      ) -> float | None:
        """Seconds from ``t0`` until every partition with a live in-sync replica has a live
        leader (None after ``recovery_bound_s``). With ``until``, keeps polling (without
        changing the measurement) until that holds as well."""
        assert self.observer is not None
        observer = self.observer

        def recovered() -> bool:
            st = observer.state()
            return st is not None and not leaderless(st, self.live(st))

        return time_recovery(t0, self.settings.recovery_bound_s, recovered, until, POLL_S)

    def metadata(self) -> dict[int, Metadata | None]:
        assert self.cluster is not None and self.observer is not None
        ports = {b: self.cluster.brokers[b].data_port for b in self.running()}
        return self.observer.metadata(ports)

    def settle(self, deadline: float
               ) -> tuple[ZkState | None, dict[int, Metadata | None], list[str]]:
        """Wait until converged and every admin operation complete (see the module's
        documentation); returns the last state, metadata answers and what is still wrong."""
        assert self.cluster is not None and self.observer is not None
        assert self.workload is not None
        expected = set(self.cluster.brokers)
        st: ZkState | None = None
        answers: dict[int, Metadata | None] = {}
        problems = ["ZooKeeper did not answer"]
        while True:
            st = self.observer.state() or st
            if st is not None:
                self.workload.progress(st)
                problems = convergence_problems(st, expected, {})
                if not problems:
                    answers = self.metadata()
                    problems = convergence_problems(st, expected, answers)
                for op in self.workload.overdue():
                    self.report.stuck.extend(self.workload.give_up([op]))
                if not problems and not self.workload.pending:
                    return st, answers, []
            if time.monotonic() >= deadline:
                if not answers:
                    answers = self.metadata()
                # Operations not overdue yet stay pending: later steps keep following them.
                return st, answers, problems
            time.sleep(0.1)

    def check_expectations(self, st: ZkState | None, expectations: list[_Expectation]
                           ) -> list[AuditViolation]:
        out = []
        for e in expectations:
            if st is None:
                continue
            epoch = st.broker_epochs.get(e.broker)
            if e.registers_again and (epoch is None or epoch == e.old_epoch):
                out.append(AuditViolation(
                    ZOMBIE_CHECK, f"broker {e.broker}",
                    f"after {e.why} it is registered with epoch {epoch}, before it had "
                    f"{e.old_epoch}: it did not notice its session expired"))
            if e.was_controller and (st.controller_epoch or 0) <= (e.controller_epoch or 0):
                out.append(AuditViolation(
                    ZOMBIE_CHECK, "/controller_epoch",
                    f"still {st.controller_epoch} after {e.why} of controller {e.broker} "
                    f"(it was {e.controller_epoch})"))
        return out

    # ------------------------------------------------------------------ faults

    def inject(self, fault: Fault, before: ZkState, record: FaultRecord,
               expectations: list[_Expectation]) -> None:
        k = fault.kind
        if k in (FaultKind.ZK_KILL_FOLLOWER, FaultKind.ZK_KILL_LEADER):
            self.inject_zk_kill(fault, record)
            return
        victim = self._resolve(fault.target, before)
        record.target = f"broker {victim}" + (
            " (ctrl)" if before.controller and before.controller.broker_id == victim else "")
        if k in (FaultKind.KILL_BROKER, FaultKind.KILL_CONTROLLER):
            self.inject_kill(victim, before, record)
        elif k in (FaultKind.PAUSE_BROKER, FaultKind.PAUSE_CONTROLLER):
            self.inject_pause(victim, before, record, expectations)
        elif k is FaultKind.CONTROLLED_SHUTDOWN:
            self.inject_controlled_shutdown(victim, before, record)
        elif k is FaultKind.RESTART_IN_SHUTDOWN:
            self.inject_restart_in_shutdown(victim, before, record)
        else:
            self.inject_session_expiry(victim, fault.target == CONTROLLER, before, record)
            ctrl = fault.target == CONTROLLER
            expectations.append(_Expectation(
                victim, before.broker_epochs.get(victim), before.controller_epoch,
                was_controller=ctrl, registers_again=not ctrl,
                why="the expiry of its " + ("controller" if ctrl else "registration")
                    + " session"))

    def _resolve(self, target: int | str | None, st: ZkState) -> int:
        if target == CONTROLLER:
            if st.controller is None:
                raise CampaignError("no controller to target")
            return st.controller.broker_id
        assert isinstance(target, int)
        return target

    def inject_kill(self, victim: int, before: ZkState, record: FaultRecord) -> None:
        c = self._cluster()
        self.stale[victim] = before.broker_epochs.get(victim)
        c.kill_broker(victim, signal.SIGKILL)
        t0 = time.monotonic()
        if not c.wait_stopped(victim, 10.0):
            raise CampaignError(f"broker {victim} still runs 10 s after SIGKILL")
        c.forget(victim)
        record.recovery_s = self.wait_recovery(t0)
        c.start_broker(victim)

    def inject_pause(self, victim: int, before: ZkState, record: FaultRecord,
                     expectations: list[_Expectation]) -> None:
        """SIGSTOP until the ensemble has expired the victim's sessions (and at least 1.2
        session timeouts), then SIGCONT: the GC pause of seed 001 §3."""
        assert self.client is not None
        reg_path = zk_paths.broker(victim)
        reg = self.client.exists(reg_path)
        ctrl = self.client.exists(zk_paths.CONTROLLER)
        was_controller = before.controller is not None and before.controller.broker_id == victim
        owners = {reg_path: reg.ephemeralOwner if reg else None}
        if was_controller and ctrl is not None:
            owners[zk_paths.CONTROLLER] = ctrl.ephemeralOwner
        self.stale[victim] = before.broker_epochs.get(victim)
        self._signal(victim, signal.SIGSTOP)
        self.paused.add(victim)
        t0 = time.monotonic()
        minimum = 1.2 * self.settings.session_s

        def expired() -> bool:
            if time.monotonic() - t0 < minimum:
                return False
            return all(self._owner(path) != owner for path, owner in owners.items())

        try:
            hold_pause(record, t0, self.wait_recovery, expired, CampaignError(
                f"broker {victim}'s sessions did not expire within "
                f"{self.settings.recovery_bound_s:g} s of its pause"))
        finally:
            self._signal(victim, signal.SIGCONT)
            self.paused.discard(victim)
        expectations.append(_Expectation(victim, before.broker_epochs.get(victim),
                                         before.controller_epoch, was_controller))

    def inject_controlled_shutdown(self, victim: int, before: ZkState,
                                   record: FaultRecord) -> None:
        c = self._cluster()
        self.stale[victim] = before.broker_epochs.get(victim)
        c.kill_broker(victim, signal.SIGTERM)
        t0 = time.monotonic()
        excluded = {victim}
        self.paused |= excluded  # not live from the SIGTERM on (its leaders must move)
        try:
            record.recovery_s = self.wait_recovery(t0)
        finally:
            self.paused -= excluded
        if not c.wait_stopped(victim, c.shutdown_grace_s):
            c.kill_broker(victim, signal.SIGKILL)
            c.wait_stopped(victim, 10.0)
            record.notes.append("controlled shutdown overran: killed")
        code = c.exit_codes.get(victim)
        if code not in (0, None):
            record.notes.append(f"exit status {code}")
        record.notes.append(f"stopped in {time.monotonic() - t0:.1f}s")
        c.forget(victim)
        c.start_broker(victim)

    def inject_restart_in_shutdown(self, victim: int, before: ZkState,
                                   record: FaultRecord) -> None:
        """SIGTERM; once the broker reports PendingControlledShutdown (its metrics), kill -9
        and start it again at once."""
        c = self._cluster()
        self.stale[victim] = before.broker_epochs.get(victim)
        port = c.brokers[victim].metrics_port
        c.kill_broker(victim, signal.SIGTERM)
        t0 = time.monotonic()
        seen = False
        while time.monotonic() - t0 < 10.0 and c.running(victim):
            if broker_state(port) == PENDING_CONTROLLED_SHUTDOWN:
                seen = True
                break
            time.sleep(0.002)  # the pending phase may last a few tens of milliseconds
        if c.running(victim):
            c.kill_broker(victim, signal.SIGKILL)
        c.wait_stopped(victim, 10.0)
        c.forget(victim)
        record.notes.append("killed in PendingControlledShutdown" if seen
                            else "shutdown ended before the kill")
        c.start_broker(victim)
        record.recovery_s = self.wait_recovery(t0)

    def inject_session_expiry(self, victim: int, controller_session: bool, before: ZkState,
                              record: FaultRecord) -> None:
        assert self.client is not None and self.cluster is not None
        path = zk_paths.CONTROLLER if controller_session else zk_paths.broker(victim)
        stat = self.client.exists(path)
        if stat is None or not stat.ephemeralOwner:
            raise CampaignError(f"{path} does not exist: no session to expire")
        if not controller_session:
            self.stale[victim] = before.broker_epochs.get(victim)
        record.target = (f"ctrl session of {victim}" if controller_session
                         else f"broker {victim} session")
        t0 = time.monotonic()
        took = expire_session(self.cluster.zookeeper, stat.ephemeralOwner,
                              auth=self.settings.auth, watch=self.client, owned_path=path)
        record.notes.append(f"session 0x{stat.ephemeralOwner:x} closed in {took:.2f}s")
        record.recovery_s = self.wait_recovery(t0)

    def inject_zk_kill(self, fault: Fault, record: FaultRecord) -> None:
        ens = self._ensemble()
        status = ens.status()
        modes = {row.id: row.mode for row in status.servers}
        if fault.kind is FaultKind.ZK_KILL_LEADER:
            victims = [sid for sid, mode in modes.items() if mode == "leader"]
        else:
            followers = sorted(sid for sid, mode in modes.items() if mode == "follower")
            victims = [followers[int(fault.target or 0) % len(followers)]] if followers else []
        if not victims:
            raise CampaignError(f"no ZooKeeper server to kill for {fault.kind.value} "
                                f"(modes {modes})")
        sid = victims[0]
        record.target = f"zk server {sid}"
        server = ens.server(sid)
        assert server.pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGKILL)
        t0 = time.monotonic()
        if not _wait(lambda: not ens.is_running(sid), 10.0):
            raise CampaignError(f"ZooKeeper server {sid} still runs after SIGKILL")
        record.recovery_s = self.wait_recovery(t0)
        self._restart_zk(ens, sid)
        record.notes.append(f"quorum whole again after {time.monotonic() - t0:.1f}s")

    def _restart_zk(self, ens: Ensemble, sid: int) -> None:
        deadline = time.monotonic() + 20.0
        while True:
            try:
                ens.start_server(sid)
                break
            except EnsembleError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)
        ens.wait_for_quorum(90.0)

    # ------------------------------------------------------------------ helpers

    def _restore_everything(self) -> None:
        """After a failed injection: resume, restart whatever should run."""
        c = self._cluster()
        for b in list(self.paused):
            self._signal(b, signal.SIGCONT)
        self.paused.clear()
        for b in sorted(c.brokers):
            if not c.running(b):
                c.forget(b)
                with contextlib.suppress(ClusterError):
                    c.start_broker(b)
        ens = c.ensemble
        if ens is not None:
            for server in ens.servers:
                if not ens.is_running(server.id):
                    with contextlib.suppress(EnsembleError):
                        self._restart_zk(ens, server.id)

    def _owner(self, path: str) -> int | None:
        assert self.client is not None
        try:
            self.client.sync(path)
            stat = self.client.exists(path)
        except (KazooException, KazooTimeoutError):
            return -1  # unknown: treat as not yet expired
        return stat.ephemeralOwner if stat is not None else None

    def _signal(self, broker_id: int, signum: int) -> None:
        b = self._cluster().brokers[broker_id]
        if b.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(b.pid, signum)

    def _cluster(self) -> Cluster:
        assert self.cluster is not None
        return self.cluster

    def _ensemble(self) -> Ensemble:
        ens = self._cluster().ensemble
        if ens is None:
            raise CampaignError("no embedded ensemble to inject ZooKeeper faults into")
        return ens


def broker_state(metrics_port: int) -> int | None:
    """The broker's lifecycle state as its metrics endpoint reports it (Kafka's numbers)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                    timeout=1.0) as answer:
            text = answer.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(STATE_METRIC + " "):
            try:
                return int(float(line.split()[1]))
            except (IndexError, ValueError):
                return None
    return None


def _wait(cond: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def run_campaign(settings: Settings, console: Console | None = None,
                 json_path: Path | None = None,
                 on_fault: Callable[[FaultRecord], None] | None = None) -> tuple[int, Report]:
    """Run, report, stop everything (also on Ctrl-C/SIGTERM/SIGHUP). Returns (exit code,
    report): 0 only when violations, losses and stuck operations are all none. ``on_fault``
    is called with each fault's record once it is audited."""
    console = console or Console(width=max(Console().width, 160))
    campaign = Campaign(settings, console, on_fault=on_fault)
    return run_to_end(campaign, console, json_path, (CampaignError, ClusterError, EnsembleError))


__all__ = ["Campaign", "CampaignError", "Settings", "broker_state", "run_campaign"]
