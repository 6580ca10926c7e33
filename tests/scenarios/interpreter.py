"""A tiny command language over the simulated world, for transcript tests (etcd raft style).

A transcript is a sequence of blocks: a command line, ``----``, the expected output lines,
a blank line. Lines starting with ``#`` between blocks are comments. Commands:

    world brokers=3 [unclean=true] [auto-rebalance=false] [shutdown-retries=N]
    start all | start B
    run                      apply the fixed policy until nothing is left (one line per step)
    step [N]                 apply N policy steps
    do <action>              apply the enabled action whose description is <action>
    enabled                  list the enabled progress and timer actions
    create-topic T P:R,R,R ...   delete-topic T   add-partitions T P:R,R ...
    reassign T-P:R,R,R ...   preferred-election T-P ...   shutdown B
    shutdown B | stop B      SIGTERM (controlled shutdown) | a second SIGTERM (stop at once)
    crash B | restart B | expire broker B | expire controller [B] | drop A B
    disconnect controller|broker B   the ZooKeeper connection of that session of B is lost
    reconnect controller|broker B    ... and re-established (the same session)
    isr B T-P R,R            broker B (a leader) wants ISR R,R for T-P
    expect <query> = <value> fails the test (also under --rewrite) when it does not hold
    expect safe              the safety checks of ``safety`` hold now
    expect invariants        the whole catalogue (``invariants/``) holds now: its state
                             invariants, and its quiescent ones when nothing is pending
    show partitions|brokers|controllers|replicas|zk|metadata B|queues|channels

Queries: ``leader T-P``, ``isr T-P``, ``leader-epoch T-P``, ``controller``, ``epoch``,
``state B``, ``broker-epoch B``, ``topics``, ``quiescent``, ``replica B T-P`` (role),
``believes-leader B T-P``, ``zk PATH`` (exists), ``cs-answered B``, ``committers T-P`` (the
brokers that can commit now, ``invariants.partitions.committers``; "none"), ``session B``
(controller B's ZooKeeper client state), ``paused B``, ``session-moves B`` (the session moves
controller B logged since the last such query: ``A->B,...``).
"""

from __future__ import annotations

from typing import Any

from fsm import zk_paths as P
from fsm.values import LeaderAndIsr
from invariants.partitions import committers
from model_check.checks import default_checks
from model_check.world import actions as A
from model_check.world import executor as X
from model_check.world.config import (
    FAULT_KINDS,
    AddPartitions,
    CreateTopic,
    DeleteTopic,
    PreferredElection,
    Reassign,
    WorldConfig,
)
from model_check.world.global_view import global_view
from model_check.world.runner import Runner, next_progress
from model_check.world.world import World

from . import safety

NOISE = ("Response(from=", "respond -> ", "handle UpdateMetadata(", "handle LeaderAndIsr(",
         "handle StopReplica(")
"""Sub-lines ``run`` leaves out of a transcript (each step still shows its first line)."""
REJECTIONS = ("STALE_CONTROLLER_EPOCH", "STALE_BROKER_EPOCH")
"""... unless they tell of a fenced request."""


def tp_of(s: str) -> tuple[str, int]:
    t, p = s.rsplit("-", 1)
    return t, int(p)


def ints(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split(",") if x)


class Interpreter:
    def __init__(self) -> None:
        self.world: World | None = None
        self.runner: Runner | None = None
        self.out: list[str] = []

    # ------------------------------------------------------------ plumbing

    def execute(self, command: str) -> list[str]:
        self.out = []
        words = command.split()
        name = words[0].replace("-", "_")
        handler = getattr(self, f"cmd_{name}", None)
        if handler is None:
            raise ValueError(f"unknown command {command!r}")
        handler(words[1:])
        return self.out or ["ok"]

    @property
    def w(self) -> World:
        assert self.world is not None, "no world yet: start with `world brokers=N`"
        return self.world

    def emit(self, line: str) -> None:
        self.out.append(line.rstrip())

    def _step_out(self, line: str) -> None:
        if line.startswith(" " * 10) and any(n in line for n in NOISE) \
                and not line.endswith(REJECTIONS):
            return
        self.emit(line)

    def do(self, action: A.Action) -> None:
        assert self.runner is not None
        self.runner.do(action)

    # ------------------------------------------------------------ world and scheduling

    def cmd_world(self, args: list[str]) -> None:
        opts = dict(a.split("=", 1) for a in args)
        config = WorldConfig(
            brokers=int(opts.get("brokers", 3)),
            faults=tuple((k, 99) for k in FAULT_KINDS),
            unclean_leader_election=opts.get("unclean", "false") == "true",
            auto_leader_rebalance=opts.get("auto-rebalance", "false") == "true",
            controlled_shutdown_max_retries=int(opts.get("shutdown-retries", 3)),
        )
        self.world = World(config)
        self.runner = Runner(self.world, out=self._step_out)

    def cmd_start(self, args: list[str]) -> None:
        targets = self.w.config.broker_ids if args == ["all"] else [int(args[0])]
        for b in targets:
            self.do(A.Action(A.START, b))

    def cmd_run(self, args: list[str]) -> None:
        """``run`` or ``run without KIND ...`` (e.g. ``session-lost``: a paused broker)."""
        assert self.runner is not None
        skip = frozenset(args[1:]) if args[:1] == ["without"] else frozenset()
        n = self.runner.run(skip=skip)
        if n == 0:
            self.emit("(nothing to do)")

    def cmd_step(self, args: list[str]) -> None:
        for _ in range(int(args[0]) if args else 1):
            a = next_progress(self.w)
            if a is None:
                self.emit("(nothing to do)")
                return
            self.do(a)

    def cmd_do(self, args: list[str]) -> None:
        want = " ".join(args)
        for a in self.w.enabled_actions():
            if a.describe() == want:
                self.do(a)
                return
        enabled = "; ".join(a.describe() for a in self.w.enabled_actions())
        raise AssertionError(f"`{want}` is not enabled; enabled: {enabled}")

    def cmd_enabled(self, args: list[str]) -> None:
        for a in self.w.enabled_actions():
            if a.kind in A.PROGRESS or a.kind == A.TIMER:
                self.emit(a.describe())

    # ------------------------------------------------------------ admin

    def _admin(self, op: object) -> None:
        assert self.runner is not None
        self.runner.step += 1
        self.emit(f"{self.runner.step:>4} admin {op.describe()}: {X.run_admin(self.w, op)}")

    def cmd_create_topic(self, args: list[str]) -> None:
        parts = tuple(sorted((int(p), ints(r)) for p, r in (a.split(":") for a in args[1:])))
        self._admin(CreateTopic(args[0], parts))

    def cmd_delete_topic(self, args: list[str]) -> None:
        self._admin(DeleteTopic(args[0]))

    def cmd_add_partitions(self, args: list[str]) -> None:
        parts = tuple(sorted((int(p), ints(r)) for p, r in (a.split(":") for a in args[1:])))
        self._admin(AddPartitions(args[0], parts))

    def cmd_reassign(self, args: list[str]) -> None:
        targets = tuple(sorted((tp_of(tp), ints(r)) for tp, r in (a.split(":") for a in args)))
        self._admin(Reassign(targets))

    def cmd_preferred_election(self, args: list[str]) -> None:
        self._admin(PreferredElection(tuple(sorted(tp_of(a) for a in args))))

    def cmd_shutdown(self, args: list[str]) -> None:
        self._sigterm(int(args[0]), True)

    def cmd_stop(self, args: list[str]) -> None:
        """``stop B``: a second SIGTERM -- the broker stops at once, no controlled shutdown."""
        self._sigterm(int(args[0]), False)

    def _sigterm(self, b: int, controlled: bool) -> None:
        assert self.runner is not None
        self.runner.step += 1
        lines = X.handle_broker(self.w, b, X.ShutdownRequested(controlled))
        self.emit(f"{self.runner.step:>4} admin {'shutdown' if controlled else 'stop'} {b} "
                  f"({'SIGTERM' if controlled else 'SIGTERM again'})")
        for line in lines:
            self.emit(" " * 5 + line)

    # ------------------------------------------------------------ faults

    def cmd_crash(self, args: list[str]) -> None:
        self.do(A.Action(A.CRASH, int(args[0])))

    def cmd_restart(self, args: list[str]) -> None:
        self.do(A.Action(A.RESTART, int(args[0])))

    def cmd_expire(self, args: list[str]) -> None:
        if args[0] == "broker":
            self.do(A.Action(A.EXPIRE_BROKER, int(args[1])))
            return
        b = int(args[1]) if len(args) > 1 else self.w.active_controller()
        assert b is not None, "no active controller to expire"
        self.do(A.Action(A.EXPIRE_CONTROLLER, b))

    def cmd_drop(self, args: list[str]) -> None:
        self.do(A.Action(A.DROP, int(args[0]), int(args[1])))

    def cmd_disconnect(self, args: list[str]) -> None:
        action = A.Action(A.ZK_DISCONNECT, int(args[1]), args[0])
        assert action in self.w.enabled_actions(), f"`{action.describe()}` is not enabled"
        self.do(action)

    def cmd_reconnect(self, args: list[str]) -> None:
        self.do(A.Action(A.RECONNECT, int(args[1]), args[0]))

    def cmd_isr(self, args: list[str]) -> None:
        self.do(A.Action(A.ISR_CHANGE, int(args[0]), (tp_of(args[1]), ints(args[2]))))

    # ------------------------------------------------------------ expectations

    def cmd_expect(self, args: list[str]) -> None:
        if args == ["safe"]:
            problems = safety.check(self.w)
            assert not problems, "unsafe: " + "; ".join(problems)
            self.emit("ok: safe")
            return
        if args == ["invariants"]:
            found = default_checks().on_state(global_view(self.w))
            assert found is None, f"violated {found.invariant}: {found.detail}"
            self.emit("ok: invariants hold")
            return
        text = " ".join(args)
        query, _, want = text.partition(" = ")
        got = self.query(query.split())
        assert got == want.strip(), f"expect {query}: want {want.strip()!r}, got {got!r}"
        self.emit(f"ok: {query} = {got}")

    def query(self, q: list[str]) -> str:  # noqa: C901 -- a flat dispatch
        w = self.w
        name = q[0]
        if name in ("leader", "isr", "leader-epoch"):
            li = w.zk.data(P.partition_state(*tp_of(q[1])))
            if not isinstance(li, LeaderAndIsr):
                return "none"
            return {"leader": str(li.leader), "isr": ",".join(map(str, li.isr)),
                    "leader-epoch": str(li.leader_epoch)}[name]
        if name == "controller":
            return str(w.active_controller())
        if name == "epoch":
            return str(w.zk.data(P.CONTROLLER_EPOCH).epoch)
        if name == "state":
            return w.brokers[int(q[1])].state.value
        if name == "broker-epoch":
            return str(w.brokers[int(q[1])].epoch)
        if name == "topics":
            return ",".join(w.zk.children(P.TOPICS)) or "none"
        if name == "quiescent":
            return str(w.is_quiescent()).lower()
        if name == "replica":
            view = w.brokers[int(q[1])].replica(tp_of(q[2]))
            return "none" if view is None else view.role.value + (" fenced" if view.fenced else "")
        if name == "believes-leader":
            return str(w.brokers[int(q[1])].believes_leader(tp_of(q[2]))).lower()
        if name == "zk":
            return "exists" if w.zk.get(q[1]) is not None else "absent"
        if name == "active":
            return ",".join(str(b) for b in w.config.broker_ids
                            if w.controllers[b].is_active) or "none"
        if name == "committers":
            return ",".join(map(str, committers(global_view(w), tp_of(q[1])))) or "none"
        if name == "session":
            return w.controllers[int(q[1])].session_state.value
        if name == "paused":
            return str(w.controllers[int(q[1])].paused).lower()
        if name == "session-moves":
            log = w.controllers[int(q[1])].drain_state_change_log()
            return ",".join(f"{r.source.value}->{r.target.value}" for r in log
                            if r.kind == "session") or "none"
        if name == "metadata-leader":
            cache = dict(w.brokers[int(q[1])].metadata_cache.partitions)
            mp = cache.get(tp_of(q[2]))
            return "none" if mp is None else str(mp.leader)
        raise ValueError(f"unknown query {q!r}")

    # ------------------------------------------------------------ show

    def cmd_show(self, args: list[str]) -> None:
        for line in getattr(self, f"show_{args[0]}")(args[1:]):
            self.emit(line)

    def show_partitions(self, args: list[str]) -> list[str]:
        out = []
        zk = self.w.zk
        for t in zk.children(P.TOPICS):
            for p in sorted(zk.children(P.partitions(t)), key=int):
                node = zk.get(P.partition_state(t, int(p)))
                if node is None:
                    out.append(f"{t}-{p} (no state)")
                    continue
                li = node.data
                replicas = dict(zk.data(P.topic(t)).partitions).get(int(p), ())
                out.append(f"{t}-{p} replicas={','.join(map(str, replicas))} leader={li.leader} "
                           f"leader_epoch={li.leader_epoch} isr={','.join(map(str, li.isr))} "
                           f"controller_epoch={li.controller_epoch} version={node.version}")
        return out or ["(no partitions)"]

    def show_brokers(self, args: list[str]) -> list[str]:
        w = self.w
        out = []
        for b in w.config.broker_ids:
            node = w.zk.get(P.broker(b))
            reg = f"registered czxid={node.czxid}" if node else "unregistered"
            core = w.brokers[b]
            out.append(f"broker {b}: {'up' if w.procs[b].up else 'down'} {core.state.value} "
                       f"epoch={core.epoch} {reg} controller_epoch_seen={core.controller_epoch}")
        return out

    def show_controllers(self, args: list[str]) -> list[str]:
        w = self.w
        out = [f"/controller={w.active_controller()} /controller_epoch="
               f"{w.zk.data(P.CONTROLLER_EPOCH).epoch} (version "
               f"{w.zk.get(P.CONTROLLER_EPOCH).version})"]
        for b in w.config.broker_ids:
            c = w.controllers[b]
            if c.is_active or b in w.writes:
                out.append(f"c{b}: active={str(c.is_active).lower()} epoch={c.epoch} "
                           f"awaiting_write={c.awaiting_write}")
        return out

    def show_replicas(self, args: list[str]) -> list[str]:
        out = []
        for b in self.w.config.broker_ids:
            for (t, p), v in self.w.brokers[b].replicas():
                out.append(f"b{b} {t}-{p} {v.role.value}{' fenced' if v.fenced else ''} "
                           f"leader={v.leader} leader_epoch={v.leader_epoch} "
                           f"isr={','.join(map(str, v.isr))} zk_version={v.zk_version}")
        return out or ["(no replicas)"]

    def show_metadata(self, args: list[str]) -> list[str]:
        view = self.w.brokers[int(args[0])].metadata_cache
        out = [f"controller={view.controller_id} live="
               f"{','.join(str(b.broker_id) for b in view.live_brokers)}"]
        for (t, p), mp in view.partitions:
            out.append(f"{t}-{p} leader={mp.leader} leader_epoch={mp.leader_epoch} "
                       f"isr={','.join(map(str, mp.isr))}")
        return out

    def show_zk(self, args: list[str]) -> list[str]:
        out = []
        for path in self.w.zk.paths():
            n = self.w.zk.get(path)
            eph = " ephemeral" if n.owner else ""
            out.append(f"{path} v={n.version} czxid={n.czxid}{eph}")
        return out

    def show_queues(self, args: list[str]) -> list[str]:
        out = []
        for b in self.w.config.broker_ids:
            q = self.w.queues[b]
            if q:
                out.append(f"c{b}: " + ", ".join(
                    x.describe() if hasattr(x, "describe") else type(x).__name__ for x in q))
        return out or ["(empty)"]

    def show_channels(self, args: list[str]) -> list[str]:
        out = []
        for key in self.w.channels.nonempty():
            out.append(f"{key.describe()}: {self.w.channels.length(key)}")
        return out or ["(empty)"]


# ---------------------------------------------------------------- transcript files


def parse(text: str) -> list[tuple[list[str], str | None, list[str]]]:
    """-> [(comment lines before, command or None (trailing comments), expected lines)]."""
    blocks = []
    lines = text.splitlines()
    i = 0
    comments: list[str] = []
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            comments.append(line)
            i += 1
            continue
        command = line
        i += 1
        assert i < len(lines) and lines[i] == "----", f"line {i}: `----` expected after {command}"
        i += 1
        expected = []
        while i < len(lines) and lines[i].strip():
            expected.append(lines[i])
            i += 1
        blocks.append((comments, command, expected))
        comments = []
    if comments:
        blocks.append((comments, None, []))
    return blocks


def run_transcript(text: str, interp: Any = None) -> tuple[str, list[str], list[str]]:
    """Run every command; returns (the rewritten transcript, mismatch descriptions, failed
    expectations and errors). A failing command prints ``FAILED: ...`` and the run goes on.
    ``interp``: the interpreter to run it with (default: a ZooKeeper-mode ``Interpreter``;
    the KRaft transcripts pass a ``KRaftInterpreter``, with the same ``execute`` and ``out``)."""
    if interp is None:
        interp = Interpreter()
    out_lines: list[str] = []
    mismatches = []
    failures = []
    for comments, command, expected in parse(text):
        out_lines.extend(comments)
        if command is None:
            continue
        try:
            got = interp.execute(command)
        except AssertionError as e:
            got = [*interp.out, f"FAILED: {e}"]
            failures.append(f"`{command}`: {e}")
        if got != expected:
            mismatches.append(f"after `{command}`:\n  want:\n    " + "\n    ".join(expected)
                              + "\n  got:\n    " + "\n    ".join(got))
        out_lines += [command, "----", *got]
    return "\n".join(out_lines).rstrip() + "\n", mismatches, failures
