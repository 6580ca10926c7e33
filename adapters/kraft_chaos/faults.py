"""The KRaft campaign's faults, each injected, measured and undone by ``Faults.inject``.

The recovery clock runs from the injection until the cluster serves again
(``observe.leaderless`` empty): an active controller -- not the victim of a controller fault
-- whose committed image has every partition with an in-sync replica on a live broker led by
a live broker, and every live broker's Metadata naming that leader. *Live*: running, not
paused, not the victim of the fault, registered and unfenced. A link losing messages may
break nothing, or break it only a while after the injection: for one-way loss the recovery
is the longest stretch in which the cluster was not recovered, sampled from the injection
until it is recovered after the heal (0 when it never broke).

What must hold after the cluster settled is returned as ``Expectation``s (the runner checks
them): a paused or isolated controller stepped down and follows the new leader; a paused
broker is unfenced again; a controller whose metadata disk failed stopped (fail-stop) once a
write was due.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.campaign.timing import hold_pause, time_recovery
from adapters.chaos.report import FaultRecord
from adapters.cluster.kraft_launcher import KRaftCluster
from adapters.kraft_chaos.observe import ClusterView, leaderless, read_view
from adapters.kraft_chaos.plan import ACTIVE, DROP_REQUESTS, KFault, KFaultKind

POLL_S = 0.1
EXIT_WAIT_S = 30.0
DISK_STOP_WAIT_S = 30.0
HALT_STATUS = 3
"""A node whose metadata log write failed exits with this status (``adapters.raft_node``)."""


class FaultError(RuntimeError):
    """A fault could not be injected or undone (the message says why)."""


@dataclass
class Expectation:
    name: str
    node: int
    check: Callable[[ClusterView], str | None]
    """A problem (the violation's detail) or None."""


@dataclass
class Faults:
    cluster: KRaftCluster
    session_s: float
    fetch_s: float
    recovery_bound_s: float
    mesh: Any = None
    disks: dict[int, Any] = field(default_factory=dict)
    paused: set[int] = field(default_factory=set)
    excluded: set[int] = field(default_factory=set)
    """Brokers that do not count as live (the victim, from the fault on)."""
    not_active: set[int] = field(default_factory=set)
    """Controllers that must not be the active one for the cluster to count as recovered."""
    provoke: Callable[[], None] | None = None
    """Makes the controllers write (an admin action): a full disk must be noticed."""
    watched: int | None = None
    """A broker whose fencing in the committed image is timed (``fenced_at``)."""
    since: float = 0.0
    fenced_at: float | None = None
    slowest_reading: float = 0.0

    # ------------------------------------------------------------------ observing

    def view(self, metadata: bool = True) -> ClusterView:
        return read_view(self.cluster, self.paused, metadata=metadata)

    def running_brokers(self) -> set[int]:
        return {b for b, n in self.cluster.brokers.items() if n.running} - self.paused \
            - self.excluded

    def recovered(self) -> bool:
        t = time.monotonic()
        v = self.view()
        self.slowest_reading = max(self.slowest_reading, time.monotonic() - t)
        if self.watched is not None and self.fenced_at is None and \
                (v.registrations or {}).get(self.watched, {}).get("fenced"):
            self.fenced_at = t - self.since  # fenced when the reading began, at the latest
        if v.active is None or v.active in self.not_active:
            return False
        live = self.running_brokers() & v.unfenced()
        return not leaderless(v, live)

    def watch(self, broker: int | None, t0: float) -> None:
        self.watched, self.since, self.fenced_at, self.slowest_reading = broker, t0, None, 0.0

    def timing_notes(self, record: FaultRecord) -> None:
        """When the watched broker was seen fenced; the slowest reading of the recovery wait
        (the clock's resolution)."""
        if self.fenced_at is not None:
            record.notes.append(f"fenced by {self.fenced_at:.2f}s")
        if self.slowest_reading >= 1.0:
            record.notes.append(f"a reading took {self.slowest_reading:.1f}s")

    def wait_recovery(self, t0: float, until: Callable[[], bool] | None = None
                      ) -> float | None:
        """Seconds from ``t0`` until ``recovered`` (None after ``recovery_bound_s``); with
        ``until``, keeps polling (the measure unchanged) until that holds too."""
        return time_recovery(t0, self.recovery_bound_s, self.recovered, until, POLL_S)

    def active(self) -> int:
        v = self.view(metadata=False)
        if v.active is None:
            raise FaultError("no active controller to target")
        return v.active

    def resolve_controller(self, fault: KFault) -> int:
        active = self.active()
        if fault.target == ACTIVE:
            return active
        standbys = sorted(c for c in self.cluster.controllers if c != active)
        return standbys[fault.standby % len(standbys)]

    # ------------------------------------------------------------------ dispatch

    def inject(self, fault: KFault, record: FaultRecord) -> list[Expectation]:
        k = fault.kind
        broker = fault.target if isinstance(fault.target, int) else None
        self.watch(broker, time.monotonic())
        try:
            if k in (KFaultKind.KILL_ACTIVE, KFaultKind.KILL_STANDBY):
                return self.kill_controller(self.resolve_controller(fault), fault, record)
            if k is KFaultKind.KILL_BROKER:
                return self.kill_broker(int(fault.target or 0), record)
            if k in (KFaultKind.PAUSE_ACTIVE, KFaultKind.PAUSE_STANDBY):
                return self.pause_controller(self.resolve_controller(fault), fault, record)
            if k is KFaultKind.PAUSE_BROKER:
                return self.pause_broker(int(fault.target or 0), record)
            if k is KFaultKind.CONTROLLED_SHUTDOWN:
                return self.controlled_shutdown(int(fault.target or 0), record)
            if k.needs_disk:
                return self.disk_fault(fault, record)
            if k in (KFaultKind.ISOLATE_ACTIVE, KFaultKind.ISOLATE_STANDBY):
                return self.isolate(self.resolve_controller(fault), fault, record)
            return self.one_way_loss(self.resolve_controller(fault), fault, record)
        finally:
            self.timing_notes(record)
            self.excluded.clear()
            self.not_active.clear()
            self.watched = None

    # ------------------------------------------------------------------ processes

    def kill_controller(self, victim: int, fault: KFault, record: FaultRecord
                        ) -> list[Expectation]:
        record.target = f"controller {victim}"
        if fault.kind is KFaultKind.KILL_ACTIVE:
            self.not_active.add(victim)
        t0 = time.monotonic()
        self.cluster.kill(victim)
        record.recovery_s = self.wait_recovery(t0)
        self.cluster.start_node(victim)
        return []

    def kill_broker(self, victim: int, record: FaultRecord) -> list[Expectation]:
        record.target = f"broker {victim}"
        self.excluded.add(victim)
        t0 = self.since = time.monotonic()
        self.cluster.kill(victim)
        record.recovery_s = self.wait_recovery(t0)
        self.cluster.start_node(victim)
        return []

    def _signal(self, node_id: int, signum: int) -> None:
        self.cluster.node(node_id).signal(signum)

    def resume_all(self) -> None:
        for n in list(self.paused):
            self._signal(n, signal.SIGCONT)
        self.paused.clear()

    def pause_controller(self, victim: int, fault: KFault, record: FaultRecord
                         ) -> list[Expectation]:
        record.target = f"controller {victim}"
        was_active = fault.kind is KFaultKind.PAUSE_ACTIVE
        hold = 1.2 * max(self.fetch_s, self.session_s)
        if was_active:
            self.not_active.add(victim)
        self.cluster.node(victim).close_client()
        self._signal(victim, signal.SIGSTOP)
        self.paused.add(victim)
        t0 = time.monotonic()
        try:
            hold_pause(record, t0, self.wait_recovery, lambda: time.monotonic() - t0 >= hold,
                       FaultError(f"controller {victim}: the pause ended before {hold:.1f} s"))
        finally:
            self._signal(victim, signal.SIGCONT)
            self.paused.discard(victim)
        return [follows_the_leader(victim, "zombie_controller_steps_down" if was_active
                                   else "paused_controller_rejoins")]

    def pause_broker(self, victim: int, record: FaultRecord) -> list[Expectation]:
        record.target = f"broker {victim}"
        hold = 1.2 * self.session_s
        self.cluster.node(victim).close_client()
        self._signal(victim, signal.SIGSTOP)
        self.paused.add(victim)
        t0 = self.since = time.monotonic()

        def fenced_and_held() -> bool:
            if time.monotonic() - t0 < hold:
                return False
            regs = self.view(metadata=False).registrations or {}
            return bool(regs.get(victim, {}).get("fenced", True))

        try:
            hold_pause(record, t0, self.wait_recovery, fenced_and_held, FaultError(
                f"broker {victim} was not fenced within {self.recovery_bound_s:g} s of its "
                "pause"))
        finally:
            self._signal(victim, signal.SIGCONT)
            self.paused.discard(victim)
        return [Expectation("paused_broker_unfenced_again", victim, lambda v: None if (
            v.registrations or {}).get(victim, {}).get("fenced") is False else
            f"broker {victim} is {(v.registrations or {}).get(victim, 'not registered')} "
            "after its pause and the settle")]

    def controlled_shutdown(self, victim: int, record: FaultRecord) -> list[Expectation]:
        record.target = f"broker {victim}"
        node = self.cluster.node(victim)
        node.close_client()
        node.stopped = True
        self.excluded.add(victim)
        t0 = self.since = time.monotonic()
        node.signal(signal.SIGTERM)
        record.recovery_s = self.wait_recovery(t0)
        assert node.proc is not None
        try:
            code = node.proc.wait(max(1.0, t0 + EXIT_WAIT_S - time.monotonic()))
            record.notes.append(f"stopped in {time.monotonic() - t0:.1f}s")
            if code != 0:
                record.notes.append(f"exit status {code}")
        except subprocess.TimeoutExpired:
            node.kill()
            record.notes.append(f"controlled shutdown overran {EXIT_WAIT_S:g}s: killed")
        self.cluster.start_node(victim)
        return []

    # ------------------------------------------------------------------ disks

    def disk_fault(self, fault: KFault, record: FaultRecord) -> list[Expectation]:
        """The disk of the controller on the small filesystem full or read-only; the quorum
        kept writing (``provoke``, from a thread) until that controller stops -- it must halt
        (exit status ``HALT_STATUS``) -- or ``DISK_STOP_WAIT_S`` pass (a read-only disk fails
        only a new file: the next snapshot or segment); restored; restarted.

        The controller serves until its first failed write, so the recovery clock runs from
        its halt: until the cluster serves without it if it was the active controller (0 if
        it never halted)."""
        if not self.disks:
            raise FaultError("no small disk under a controller")
        victim = sorted(self.disks)[0]
        disk = self.disks[victim]
        node = self.cluster.node(victim)
        record.target = f"controller {victim}"
        t0 = time.monotonic()
        if fault.kind is KFaultKind.DISK_FULL:
            disk.fill()
        else:
            disk.read_only()
        stop = threading.Event()
        writer = threading.Thread(target=self._keep_writing, args=(stop,), daemon=True)
        expectations: list[Expectation] = []
        try:
            writer.start()
            deadline = t0 + DISK_STOP_WAIT_S
            while node.running and time.monotonic() < deadline:
                time.sleep(POLL_S)
            halted = time.monotonic()
            if node.running:
                record.notes.append(f"no write failed in {DISK_STOP_WAIT_S:g}s: kept running")
                record.recovery_s = 0.0 if self.recovered() else self.wait_recovery(halted)
            else:
                assert node.proc is not None
                code = node.proc.returncode
                node.stopped = True
                record.notes.append(f"halted {halted - t0:.1f}s after the fault, exit {code}")
                if code != HALT_STATUS:
                    detail = (f"controller {victim} exited with status {code} on its "
                              f"{disk.state} disk, not {HALT_STATUS} (halted)")
                    expectations.append(Expectation("fail_stop_on_disk_error", victim,
                                                    lambda v, d=detail: d))
                self.not_active.add(victim)
                record.recovery_s = self.wait_recovery(halted)
        finally:
            stop.set()
            writer.join(2 * DISK_STOP_WAIT_S)
            disk.restore()
        if not node.running:
            self.cluster.start_node(victim)
        return [*expectations, follows_the_leader(victim, "failed_controller_rejoins")]

    def _keep_writing(self, stop: threading.Event) -> None:
        while not stop.is_set() and self.provoke is not None:
            self.provoke()
            stop.wait(POLL_S)

    # ------------------------------------------------------------------ network

    def _mesh(self) -> Any:
        if self.mesh is None:
            raise FaultError("no proxy mesh between the nodes")
        return self.mesh

    def isolate(self, victim: int, fault: KFault, record: FaultRecord) -> list[Expectation]:
        mesh = self._mesh()
        name = self.cluster.node(victim).name
        record.target = f"controller {victim}"
        if fault.kind is KFaultKind.ISOLATE_ACTIVE:
            self.not_active.add(victim)
        hold = 1.5 * self.fetch_s
        t0 = time.monotonic()
        mesh.isolate(name)
        try:
            record.recovery_s = self.wait_recovery(t0, until=lambda: time.monotonic() - t0 >= hold)
            record.notes.append(f"isolated {time.monotonic() - t0:.1f}s")
        finally:
            mesh.heal(name)
        return [follows_the_leader(victim, "isolated_controller_rejoins")]

    def one_way_loss(self, victim: int, fault: KFault, record: FaultRecord
                     ) -> list[Expectation]:
        from adapters.kraft_chaos.proxy import LinkMode

        mesh = self._mesh()
        name = self.cluster.node(victim).name
        mode = LinkMode.DROP_REQUESTS if fault.drop == DROP_REQUESTS else \
            LinkMode.DROP_RESPONSES
        record.target = f"controller {victim}"
        t0 = time.monotonic()
        links = [link for link in mesh.modes() if _target_of(link) == name]
        outage = Outage()
        try:
            for link in links:
                mesh.set_mode(_source_of(link), name, mode, loss=fault.loss)
            while time.monotonic() - t0 < fault.hold_s:
                outage.sample(self.recovered())
                time.sleep(POLL_S)
        finally:
            mesh.heal(name)
        deadline = time.monotonic() + self.recovery_bound_s
        while not outage.sample(self.recovered()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        record.recovery_s = outage.longest if outage.up else None
        record.notes.append(f"{len(links)} link(s), {fault.hold_s:g}s")
        return [follows_the_leader(victim, "controller_rejoins_after_loss")]

    def heal_all(self) -> None:
        if self.mesh is not None:
            with contextlib.suppress(Exception):
                self.mesh.heal()

    def restore_disks(self) -> None:
        for disk in self.disks.values():
            with contextlib.suppress(Exception):
                disk.restore()


@dataclass
class Outage:
    """The longest stretch of samples in which the cluster was not recovered."""

    longest: float = 0.0
    since: float | None = None
    up: bool = True

    def sample(self, recovered: bool) -> bool:
        now = time.monotonic()
        if recovered:
            if self.since is not None:
                self.longest = max(self.longest, now - self.since)
            self.since = None
        elif self.since is None:
            self.since = now
        self.up = recovered
        return recovered


def _source_of(link: Any) -> str:
    return str(link[0])


def _target_of(link: Any) -> str:
    return str(link[1])


def follows_the_leader(victim: int, name: str) -> Expectation:
    def check(v: ClusterView) -> str | None:
        s = v.statuses.get(victim)
        if s is None:
            return f"controller {victim} does not answer"
        if v.active is None:
            return "no active controller"
        if victim != v.active and s.get("role") == "leader":
            return (f"controller {victim} still claims leadership in epoch {s.get('epoch')}; "
                    f"the active controller is {v.active} in epoch {v.epoch}")
        if (s.get("epoch"), s.get("leader_id")) != (v.epoch, v.active):
            return (f"controller {victim} is in epoch {s.get('epoch')} following "
                    f"{s.get('leader_id')}, not {v.active} in {v.epoch}")
        return None

    return Expectation(name, victim, check)


__all__ = ["Expectation", "FaultError", "Faults", "follows_the_leader"]
