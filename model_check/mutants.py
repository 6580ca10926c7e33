"""Historic-bug mutants: patches, applied from outside ``fsm/``, that reopen known Kafka bugs.

The checker is only worth its invariants if it finds the bugs they were written against.
Each mutant here undoes one fence or one ordering rule of the core -- by replacing a
function or a method of the ``fsm`` modules (or, where the fence lives in the adapter, of
the world's executor) for the duration of a ``with patched(name):`` block -- and names a
small shipped scenario on which the search must find it, with the length of the shortest
counterexample after the setup. The core itself carries no flag: a mutant is a monkeypatch,
and leaving the block restores every patched attribute.

    kcontrol check --list-mutants
    kcontrol check mutants-restart --mutant broker-ignores-broker-epoch

A mutant patches module globals of the process it runs in: an engine that explores in
other processes (Spark executors) must enter ``patched(name)`` there too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


class UnknownMutant(KeyError):
    """A mutant name that is not in the catalogue."""


@dataclass(frozen=True)
class Mutant:
    name: str
    summary: str  # one line, for --list-mutants
    source: str  # the Kafka issue or seed section it reopens
    scenario: str  # the shipped scenario that finds it (the clean core passes it)
    depth: int  # the shortest counterexample's length after the setup, as measured
    install: Callable[[_Patches], None]

    def line(self) -> str:
        return f"{self.name}  {self.summary} ({self.source}; found by {self.scenario})"


class _Patches:
    """Attribute and item replacements, undone in reverse order."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def setattr(self, target: object, name: str, value: object) -> None:
        old = getattr(target, name)
        setattr(target, name, value)
        self._undo.append(lambda: setattr(target, name, old))

    def setitem(self, target: dict, key: object, value: object) -> None:
        old = target[key]
        target[key] = value
        self._undo.append(lambda: target.__setitem__(key, old))

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


# ---------------------------------------------------------------- the patches


def _patch_handler(p: _Patches, event_type: type, handler: Callable[..., None]) -> None:
    """Replace the controller's handler of ``event_type``: the controller dispatches through
    its ``_DISPATCH`` table of functions (patching a ``Controller`` method would not reach
    it), so the table is replaced as a whole -- a new module global, which the memos'
    code token notices (an item changed in place would not be)."""
    from fsm.controller import controller

    p.setattr(controller, "_DISPATCH", {**controller._DISPATCH, event_type: handler})


def _no_controller_epoch_check(p: _Patches) -> None:
    """KAFKA-6082: the executor commits the controller's writes without the
    ``check(/controller_epoch, version)`` op, and on whatever session the client holds now
    (ZkClient re-created the expired one and replayed the request). A zombie controller's
    decisions, still in flight when its session expired, land after the new controller's."""
    from fsm.events import WriteResult
    from model_check.world import executor as X

    original = X.commit

    def commit(w: Any, pw: Any) -> WriteResult:
        write = pw.write
        if write.fence_version is None:  # the election's own transaction: unchanged
            return original(w, pw)
        failures: list = []
        for op in write.ops:
            r = w.zk.multi((op,))
            if not r.ok:
                failures += X.failures_of(w, (op,), r)
        return WriteResult(write.token, failures=tuple(failures))

    p.setattr(X, "commit", commit)


def _broker_ignores_broker_epoch(p: _Patches) -> None:
    """KIP-380 undone: a broker applies a request stamped with any broker epoch (seed 000:
    a StopReplica meant for the previous incarnation takes down the restarted broker's
    replica)."""
    from fsm.broker import commands
    from fsm.errors import ErrorCode

    def epoch_error(own_epoch: int | None, highest_controller_epoch: int,
                    broker_epoch: int, controller_epoch: int) -> ErrorCode:
        if own_epoch is None:
            return ErrorCode.STALE_BROKER_EPOCH
        if controller_epoch < highest_controller_epoch:
            return ErrorCode.STALE_CONTROLLER_EPOCH
        return ErrorCode.NONE

    p.setattr(commands, "epoch_error", epoch_error)


def _broker_accepts_stale_controller_epoch(p: _Patches) -> None:
    """A broker applies a request from a controller epoch older than one it has applied
    (a deposed controller's LeaderAndIsr undoes the new controller's decisions)."""
    from fsm.broker import commands
    from fsm.errors import ErrorCode

    def epoch_error(own_epoch: int | None, highest_controller_epoch: int,
                    broker_epoch: int, controller_epoch: int) -> ErrorCode:
        if own_epoch is None or broker_epoch != own_epoch:
            return ErrorCode.STALE_BROKER_EPOCH
        return ErrorCode.NONE

    p.setattr(commands, "epoch_error", epoch_error)


def _unconditional_isr_update(p: _Patches) -> None:
    """Seed 001 §3 undone: a leader writes its ISR change without the znode-version
    condition, so a leader deposed during a pause overwrites the controller's new state."""
    from fsm.broker import isr
    from fsm.effects import SetDataOp

    def unconditional(path: str, data: object, version: int = -1) -> SetDataOp:
        return SetDataOp(path, data, -1)

    p.setattr(isr, "SetDataOp", unconditional)


def _leader_epoch_not_bumped(p: _Patches) -> None:
    """The controller elects a new leader without increasing the leader epoch: brokers
    cannot tell the new leadership from the old one."""
    from fsm.controller import brokers, controller, leader_selection

    original = leader_selection.decide

    def decide(kind: str, arg: int, assigned: tuple, cur: Any, *rest: Any, **kw: Any) -> Any:
        new = original(kind, arg, assigned, cur, *rest, **kw)
        if new is not None and cur.leader_epoch >= 0 and new.leader != cur.leader:
            new = new.__class__(new.leader, cur.leader_epoch, new.isr, new.controller_epoch)
        return new

    p.setattr(controller, "decide", decide)
    p.setattr(brokers, "decide", decide)


def _early_controlled_shutdown_reply(p: _Patches) -> None:
    """The controller answers a ControlledShutdown "nothing remaining" as soon as it reads
    it, before the leader moves it decides are written: the broker stops while ZooKeeper
    still names it leader."""
    from fsm.controller import controller
    from fsm.effects import ReplyControlledShutdown
    from fsm.errors import ErrorCode
    from fsm.events import ControlledShutdown
    from fsm.requests import ControlledShutdownResponse

    original = controller._DISPATCH[ControlledShutdown]

    def on_controlled_shutdown(self: controller.Controller, ev: Any) -> None:
        b = ev.request.broker_id
        if self._active and self._loaded and \
                self._check_broker_epoch(b, ev.request.broker_epoch) is ErrorCode.NONE:
            self._effects.append(ReplyControlledShutdown(
                b, ev.correlation, ControlledShutdownResponse(ErrorCode.NONE, ())))
        original(self, ev)

    _patch_handler(p, ControlledShutdown, on_controlled_shutdown)


def _deletion_before_replicas_deleted(p: _Patches) -> None:
    """Topic deletion completes as soon as every replica was *sent* its
    StopReplica(delete=true), without waiting for the answers (TopicDeletionManager's
    ReplicaDeletionSuccessful skipped): when the controller dies before its requests are
    out, the brokers keep the deleted topic -- in their metadata and on disk -- and nobody
    will ever tell them (the topic is gone from ZooKeeper)."""
    from fsm.controller.controller import Controller
    from fsm.replica_states import ReplicaState as R

    original = Controller._plan_deletion_progress
    done = (R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful)

    def plan_deletion_progress(self: Controller, plan: Any) -> None:
        original(self, plan)
        ctx = self.ctx
        for t in sorted(ctx.to_delete):
            pairs = [(tp, b, s) for tp in ctx.topics.get(t, ())
                     for b, s in ctx.replica_states.get(tp, ())]
            if pairs and all(s in done for _, _, s in pairs) and \
                    any(s is R.ReplicaDeletionStarted for _, _, s in pairs):
                self._move_replicas([(tp, b, R.ReplicaDeletionSuccessful) for tp, b, s in pairs
                                     if s is R.ReplicaDeletionStarted],
                                    "mutant: StopReplica sent")
                self._complete_deletion(plan, t)

    p.setattr(Controller, "_plan_deletion_progress", plan_deletion_progress)


def _bounced_broker_forgotten(p: _Patches) -> None:
    """The controller's driver removes a bounced broker's channel (same id, new epoch: the
    ``BrokerChange`` lists it live again) without telling the channel manager the live
    brokers again: the manager forgot the broker with its channel, and the requests to the
    new incarnation are dropped as "unknown broker" (found by ``kcontrol chaos`` in the live
    service: a deletion never finished, metadata never sent)."""
    from fsm.driver import controller as driver
    from fsm.effects import RemoveBrokerChannel

    def remove_channel(d: Any, eff: RemoveBrokerChannel, ev: object) -> None:
        d.port.remove_broker_channel(eff.broker_id)

    p.setattr(driver, "EFFECTS", {**driver.EFFECTS, RemoveBrokerChannel: remove_channel})


MUTANTS: tuple[Mutant, ...] = (
    Mutant("no-controller-epoch-check",
           "controller writes committed without the /controller_epoch version check",
           "KAFKA-6082", "mutants-failover", 8, _no_controller_epoch_check),
    Mutant("broker-ignores-broker-epoch",
           "brokers apply requests stamped with another broker epoch",
           "KIP-380; seed 000 broker generations", "mutants-restart", 7,
           _broker_ignores_broker_epoch),
    Mutant("unconditional-isr-update",
           "a leader's ISR update is written without the znode-version condition",
           "seed 001 §3", "mutants-isr", 5, _unconditional_isr_update),
    Mutant("leader-epoch-not-bumped",
           "a leader change keeps the old leader epoch",
           "seed 001 leader epoch; KIP-101", "smoke", 5, _leader_epoch_not_bumped),
    Mutant("broker-accepts-stale-controller-epoch",
           "brokers apply requests from an older controller epoch",
           "seed 000 controller epoch", "mutants-failover", 10,
           _broker_accepts_stale_controller_epoch),
    Mutant("early-controlled-shutdown-reply",
           "controlled shutdown answered before the leaders move",
           "seed 000 controlled shutdown", "mutants-shutdown", 4,
           _early_controlled_shutdown_reply),
    Mutant("deletion-before-replicas-deleted",
           "topic deletion finished before every replica is deleted",
           "seed 000 TopicDeletionManager", "mutants-deletion", 13,
           _deletion_before_replicas_deleted),
    Mutant("bounced-broker-forgotten",
           "a bounced broker's channel removed and the broker not announced again",
           "kcontrol chaos: requests to the new incarnation dropped", "broker-lifecycle", 7,
           _bounced_broker_forgotten),
)

_BY_NAME = {m.name: m for m in MUTANTS}


def names() -> list[str]:
    return [m.name for m in MUTANTS]


def get(name: str) -> Mutant:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownMutant(f"no mutant {name!r}; known: {', '.join(names())}") from None


@contextmanager
def patched(name: str | None, find: Callable[[str], Mutant] | None = None
            ) -> Iterator[Mutant | None]:
    """Apply mutant ``name`` for the block (None: nothing, the clean core). ``find``: the
    catalogue's lookup (default: this one's ``get``; the KRaft catalogue passes its own)."""
    if name is None:
        yield None
        return
    mutant = (find or get)(name)
    patches = _Patches()
    try:
        mutant.install(patches)
        yield mutant
    finally:
        patches.undo()
