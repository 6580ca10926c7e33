"""The KRaft world on the Raft log (``log = "raft"`` in a scenario): every quorum controller is
a voter of the metadata quorum -- a real ``RaftNode`` and the real ``QuorumController``, joined
by the real glue ``ControllerOnRaft`` -- over this world's port. Brokers, their channels, time
and the broker faults are ``KRaftWorld``'s; what changes is the log.

* **Each voter's log** is a ``VoterLog`` (batches, log start, snapshot, ``quorum-state``).
  Every Raft effect on it is carried out at once, ``Flush`` included: the node hears one
  ``Flushed`` per ``Flush``, in order, right after the event that asked for them, before
  anything else happens
  (crashes between an append and its fsync are the Raft world's, ``model_check.raft``; this
  world checks the controller on top of the real Raft).
* **The network** is one FIFO of (source, destination, message) between voters.
  ``replicate`` delivers it, in order, until nothing is left (bounded; no timer fires, so a
  caught-up follower's fetch stays parked at the leader): that commits everything appended.
* **Elections** are real: ``failover`` has the leader resign (``Resign``), fires the next
  voter's election (or fetch) timer and replicates; if that voter loses (its log is behind
  the resigned leader's uncommitted tail), the next voter's timer fires, and so on until a
  leader is elected and its controller is active. The setup elects the first leader the same
  way from voter 0 (action ``elect``). ``crash-controller`` (budget ``controller_crash``)
  ends a voter's process: its log stays, messages to it are lost, answers its controller held
  back are lost (the brokers waiting on them hear the request is lost and retry);
  ``restart-controller`` (``controller_restart``) starts a new ``RaftNode`` from the log's
  summary and ``quorum-state``, a new ``QuorumController``, and the glue (which loads the
  snapshot, if any). With no leader alive, ``elect`` (no budget) fires an alive voter's
  timer when a majority is alive.
* **The committed log** (``log``, ``hw``: what the invariants read) grows when any voter
  learns a higher high watermark; each time, the world checks that voter's log holds the
  same records at every committed offset it holds (Raft's log matching, as the KRaft world
  sees it: a mismatch raises, a finding).
* **Requests** from brokers and admin go to the active controller (``controller.active``; of
  two, the higher epoch's). While none is active they wait in their channel: ``deliver-request``
  and the admin requests are not enabled (a SIGTERM to a broker still is). A controller that
  loses leadership answers what it held back with NOT_CONTROLLER (the core's rule).
* **Brokers** are the log's observers (KIP-595) but not Raft nodes here: ``fetch`` hands one
  the records of the Raft leader's log from its offset up to the leader's high watermark,
  control records included (they take offsets; the broker skips them). A broker behind the
  leader's log start (the leader snapshotted, with ``snapshot_every``, and deleted what was
  below) loads the leader's snapshot instead (``MetadataSnapshotLoaded``: its records, the
  image at the snapshot's end), as the live observer does with FetchSnapshot, and fetches
  the rest next time.

* **Time** reaches every live controller as ``Tick`` (standbys too: the glue hands a new active
  controller the time it last heard, for its brokers' fresh leases). Raft events carry
  ``now_ms`` 0: the core reads time only for DescribeQuorum's lags, which nothing here reads,
  and a fetch's time in the node's state would split states that differ in nothing else.

``trace`` (the transcript tests' hook) is not told of the cores' steps in this world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsm.kraft.broker.events import (
    ControllerUnreachable,
    MetadataFetched,
    MetadataSnapshotLoaded,
)
from fsm.kraft.controller.events import ControllerRequest, Tick
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.image import MetadataImage, image_from_records
from fsm.kraft.on_raft import ControllerOnRaft
from fsm.raft.config import RaftConfig
from fsm.raft.effects import ELECTION, FETCH
from fsm.raft.events import Flushed, Received, Resign, TimerFired
from fsm.raft.events import Start as RaftStart
from fsm.raft.messages import FetchSnapshotResponse, LeaderChange
from fsm.raft.roles import RaftRole
from model_check.kraft.raft_log import VoterLog
from model_check.kraft.raft_port import VoterPort, new_node
from model_check.kraft.scenario import KRaftScenario
from model_check.kraft.world import (
    KAction,
    KRaftWorld,
    _broker_key,
    _controller_key,
    _value,
    new_controller,
)

BASE_ID = 3000
"""Voter ``i`` is node ``BASE_ID + i`` (the controllers' ids)."""
MAX_DELIVERIES = 2000
"""Messages one ``replicate`` delivers at most: more is a loop (two nodes that never settle)."""
MAX_NETWORK = 64
"""Messages in flight at once: more is a bug (a node that floods)."""
MAX_FLUSHES = 16
_GLUE_REBUILT = frozenset({"port", "_queue"})
"""A glue's parts that are not values: made again by ``ControllerOnRaft.copy``."""


@dataclass
class KRaftRaftWorld(KRaftWorld):
    voters: list[ControllerOnRaft | None] = field(default_factory=list)
    """Voter i's glue (its ``raft`` and ``controller``), None while it is crashed."""
    logs: list[VoterLog] = field(default_factory=list)
    net: tuple[tuple[int, int, Any], ...] = ()
    """(source index, destination index, message), oldest first."""
    incoming: tuple[tuple[int, Any, tuple[Any, ...]], ...] = ()
    """(voter, snapshot id, records so far) of the snapshots being fetched."""
    flush_due: list[tuple[int, int]] = field(default_factory=list, compare=False)
    """(voter, end offset) of the flushes asked for during the current event, in order (empty
    between steps): each is answered by its own ``Flushed``, as the core counts them."""

    # -- construction ------------------------------------------------------------------------
    @staticmethod
    def fresh(scenario: KRaftScenario, reached: set[tuple[str, ...]] | None = None
              ) -> KRaftRaftWorld:
        w = KRaftRaftWorld(scenario, budgets=dict(scenario.faults), reached=reached,
                           active=-1, epoch=0)
        n = scenario.controllers
        w.logs, w.voters, w.controllers = [VoterLog()] * n, [None] * n, [None] * n
        for i in range(n):
            w._boot(i)
        w._add_brokers()
        return w

    @property
    def voter_ids(self) -> tuple[int, ...]:
        return tuple(BASE_ID + i for i in range(len(self.logs)))

    def _boot(self, i: int) -> None:
        """Start voter ``i``'s process from its log: a new Raft node, controller and glue."""
        log = self.logs[i]
        raft = new_node(RaftConfig(BASE_ID + i, self.voter_ids), log.quorum, log.summary())
        controller = new_controller(i)
        self.voters[i] = ControllerOnRaft(raft, controller, VoterPort(self, i),
                                          self.scenario.snapshot_every)
        self.controllers[i] = controller
        self._voter(i, RaftStart())
        self._voter(i, Tick(self.now))

    def snapshot(self) -> KRaftRaftWorld:
        other = KRaftRaftWorld(controllers=[], logs=list(self.logs), net=self.net,
                               incoming=self.incoming, **self._copied_fields())
        for i, glue in enumerate(self.voters):
            if glue is None:
                other.voters.append(None)
                other.controllers.append(self.controllers[i].copy())
            else:
                twin = glue.copy(VoterPort(other, i))
                other.voters.append(twin)
                other.controllers.append(twin.controller)
        return other

    def __getstate__(self) -> dict[str, Any]:
        """For pickle (the Spark engine ships worlds between processes): a glue's drivers
        are closures over it, so each glue travels as its plain fields and is made again,
        with its port, by its own ``copy`` on arrival."""
        state = dict(self.__dict__)
        state["voters"] = [None if g is None else {k: v for k, v in g.__dict__.items()
                                                    if k not in _GLUE_REBUILT}
                           for g in self.voters]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for i, fields in enumerate(state["voters"]):
            if fields is None:
                continue
            bare = ControllerOnRaft.__new__(ControllerOnRaft)
            bare.__dict__.update(fields)
            glue = bare.copy(VoterPort(self, i))
            self.voters[i] = glue
            self.controllers[i] = glue.controller

    def key(self) -> int:
        canon = (self.active, self.epoch, self.hw, tuple(self.logs), self.net, self.incoming,
                 tuple(None if g is None else (g.raft.key(), g.key()) for g in self.voters),
                 tuple(_controller_key(c) for c in self.controllers),
                 tuple(_broker_key(self.brokers[b]) for b in sorted(self.brokers)),
                 _value(self.to_controller), _value(self.to_broker), _value(self.timer),
                 _value(self.disk), _value(self.starts), self.now, _value(self.budgets),
                 tuple(sorted(self.admin_done)), self.admin_answers, self.topic_ids)
        return hash(canon)

    # -- reading ---------------------------------------------------------------------------
    def leader(self) -> int | None:
        """The alive voter that is the Raft leader (of the highest epoch), or None."""
        best = None
        for i, g in enumerate(self.voters):
            if g is not None and g.raft.role is RaftRole.LEADER and (
                    best is None or g.raft.epoch > self.voters[best].raft.epoch):
                best = i
        return best

    @property
    def controller(self) -> QuorumController:
        """The active controller; with none, the one that has replayed the most."""
        if self.active >= 0:
            return self.controllers[self.active]
        return max(self.controllers, key=lambda c: c.committed_offset)

    def committed_image(self) -> MetadataImage:
        """The active controller's committed image; with none active, the committed log's
        (its metadata records replayed afresh)."""
        if self.active >= 0:
            return self.controllers[self.active].committed
        return image_from_records([r for r in self.log if not isinstance(r, LeaderChange)])

    def log_end(self) -> int:
        lead = self.leader()
        return self.logs[lead].end if lead is not None else len(self.log)

    def pending(self) -> bool:
        lead = self.leader()
        return (bool(self.net) or any(self.to_controller.values())
                or any(self.to_broker.values())
                or (lead is not None
                    and self.logs[lead].end > self.voters[lead].raft.high_watermark)
                or any(self.alive(b) and self.brokers[b].metadata_offset < self.hw
                       for b in self.brokers))

    def majority_alive(self) -> bool:
        return sum(g is not None for g in self.voters) > len(self.voters) // 2

    # -- what the log decides --------------------------------------------------------------
    def _log_actions(self) -> list[KAction]:
        out = [KAction("replicate")] if self.net else []
        if self.leader() is None and self.majority_alive():
            out += [KAction("elect", i) for i, g in enumerate(self.voters)
                    if g is not None and self._election_timer(i) is not None]
        return out

    def _reachable(self) -> bool:
        return self.active >= 0

    def _fetchable(self) -> int:
        lead = self.leader()
        return -1 if lead is None else self.voters[lead].raft.high_watermark - 1

    def _can_fail_over(self) -> bool:
        return len(self.voters) > 1 and self.leader() is not None and self.majority_alive()

    def _controller_faults(self) -> list[KAction]:
        out = []
        budget = self.budgets.get
        for i, g in enumerate(self.voters):
            if g is not None and budget("controller_crash", 0) > 0:
                out.append(KAction("crash-controller", i))
            if g is None and budget("controller_restart", 0) > 0:
                out.append(KAction("restart-controller", i))
        return out

    # -- the steps ---------------------------------------------------------------------------
    def _fetch(self, a: KAction) -> None:
        lead = self.leader()
        assert lead is not None, "fetch with no leader"
        base = self.brokers[a.target].metadata_offset + 1
        end = self.voters[lead].raft.high_watermark
        log = self.logs[lead]
        if base < log.start and log.snapshot_id is not None:  # deleted: in its snapshot
            self._broker(a.target, MetadataSnapshotLoaded(log.snapshot_id.offset,
                                                          log.snapshot))
            return
        records = self.logs[lead].records(base, end)
        if len(records) != end - base:
            raise AssertionError(f"the leader's log holds {len(records)} records of "
                                 f"[{base}, {end})")
        self._broker(a.target, MetadataFetched(base, records))

    def _replicate(self, _a: KAction | None = None) -> None:
        for _ in range(MAX_DELIVERIES):
            if not self.net:
                return
            (src, dst, message), self.net = self.net[0], self.net[1:]
            if self.voters[dst] is None:
                continue  # to a crashed process: lost
            if isinstance(message, FetchSnapshotResponse) and message.chunk is not None:
                self._receive_chunk(dst, message)
            self._voter(dst, Received(BASE_ID + src, message))
        raise AssertionError(f"replicate did not settle in {MAX_DELIVERIES} deliveries")

    def _elect(self, a: KAction) -> None:
        self._fire_election(a.target)
        self._replicate()

    def _failover(self, _a: KAction) -> None:
        self._spend("failover")
        old = self.leader()
        assert old is not None, "failover with no leader"
        self._voter(old, Resign())
        n = len(self.voters)
        candidate = old
        for _ in range(2 * n):
            candidate = self._next_alive(candidate)
            if self._election_timer(candidate) is None:
                continue
            self._fire_election(candidate)
            self._replicate()
            if self.leader() is not None and self.active >= 0:
                return
        raise AssertionError(f"no controller active after failover from voter {old} "
                             f"(leader: {self.leader()})")

    def _tick(self, _a: KAction) -> None:
        self._spend("ticks")
        self.now += 1
        for i, glue in enumerate(self.voters):
            if glue is not None:
                self._voter(i, Tick(self.now))

    def _crash_controller(self, a: KAction) -> None:
        self._spend("controller_crash")
        i = a.target
        glue = self.voters[i]
        assert glue is not None
        for _, reply in glue.controller._waiting:  # held back: lost with the process
            kind, who, *rest = reply.token
            if kind == "broker" and self.alive(who):
                self._broker(who, ControllerUnreachable(rest[0]))
        self.voters[i] = None
        self.controllers[i] = new_controller(i)
        self.net = tuple(m for m in self.net if m[1] != i)
        self.incoming = tuple(x for x in self.incoming if x[0] != i)
        self._settle_active()

    def _restart_controller(self, a: KAction) -> None:
        self._spend("controller_restart")
        self._boot(a.target)

    # -- helpers ---------------------------------------------------------------------------
    def _next_alive(self, i: int) -> int:
        n = len(self.voters)
        for k in range(1, n + 1):
            j = (i + k) % n
            if self.voters[j] is not None:
                return j
        return i

    def _election_timer(self, i: int) -> str | None:
        glue = self.voters[i]
        armed = () if glue is None else glue.raft.armed
        for kind in (ELECTION, FETCH):
            if (kind, -1) in armed:
                return kind
        return None

    def _fire_election(self, i: int) -> None:
        kind = self._election_timer(i)
        if kind is None:
            raise AssertionError(f"voter {i} has no election or fetch timer armed")
        self._voter(i, TimerFired(kind, -1))

    def _receive_chunk(self, i: int, m: FetchSnapshotResponse) -> None:
        so_far: tuple[Any, ...] = ()
        for v, sid, records in self.incoming:
            if v == i and sid == m.snapshot_id:
                so_far = records
        if m.position != len(so_far):
            return  # a chunk out of place: the core refuses it too
        rest = tuple(x for x in self.incoming if x[0] != i)
        self.incoming = rest + ((i, m.snapshot_id, so_far + tuple(m.chunk)),)

    def installed(self, i: int, snapshot_id: Any) -> tuple[Any, ...]:
        """The records of the snapshot voter ``i`` fetched whole (for ``InstallSnapshot``)."""
        for v, sid, records in self.incoming:
            if v == i and sid == snapshot_id:
                self.incoming = tuple(x for x in self.incoming if x[0] != i)
                return records
        raise AssertionError(f"voter {i} installs snapshot {snapshot_id} it never fetched")

    def post(self, src: int, dst_id: int, message: Any) -> None:
        if len(self.net) >= MAX_NETWORK:
            raise AssertionError(f"{len(self.net) + 1} messages in flight between voters")
        self.net = self.net + ((src, dst_id - BASE_ID, message),)

    def committed(self, i: int, offset: int) -> None:
        """Voter ``i`` learned that the log is committed below ``offset``: the world's
        committed log grows, and the voter's log must agree with it."""
        log, known = self.logs[i], len(self.log)
        lo = log.start
        held = log.records(lo, min(offset, known))
        if held != tuple(self.log[lo:lo + len(held)]):
            raise AssertionError(f"voter {i}'s log differs from the committed log below "
                                 f"offset {min(offset, known)}")
        if offset > known:
            new = log.records(known, offset)
            if len(new) != offset - known:
                raise AssertionError(f"voter {i}'s high watermark {offset} is past its log "
                                     f"[{log.start}, {log.end})")
            self.log.extend(new)
            self.hw = offset - 1

    # -- the cores, through the glue -----------------------------------------------------------
    def _controller(self, i: int, event: Any) -> None:
        if isinstance(event, ControllerRequest) and self.controllers[i].active:
            self._reach_request(event.request)
        self._voter(i, event)

    def _voter(self, i: int, event: Any) -> None:
        """One event to voter ``i``'s glue, then the flushes it asked for, at once."""
        glue = self.voters[i]
        assert glue is not None, f"an event to crashed voter {i}"
        glue.process(event)
        for _ in range(MAX_FLUSHES):
            if not self.flush_due:
                break
            who, end = self.flush_due.pop(0)
            assert who == i, f"voter {who} flushed during voter {i}'s event"
            glue.process(Flushed(end))
        else:
            raise AssertionError(f"voter {i} keeps asking for flushes")
        self._settle_active()

    def _settle_active(self) -> None:
        best = -1
        for i, c in enumerate(self.controllers):
            if self.voters[i] is not None and c.active and (
                    best < 0 or c.epoch > self.controllers[best].epoch):
                best = i
        self.active = best
        if best >= 0:
            self.epoch = self.controllers[best].epoch


def new_world(scenario: KRaftScenario, reached: set[tuple[str, ...]] | None = None
              ) -> KRaftWorld:
    """The scenario's world: on the Raft log or on the one in-memory log."""
    if scenario.log == "raft":
        return KRaftRaftWorld.fresh(scenario, reached)
    return KRaftWorld.fresh(scenario, reached)
