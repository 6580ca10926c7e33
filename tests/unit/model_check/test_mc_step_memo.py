"""The search's memos (``model_check.memo``: the cores' step memo, the facts, the templates)
and the checks' edge memo change no answer: the same states, levels and verdicts with and
without them; memos made for other code know it; a world given none runs everything."""

from __future__ import annotations

import pytest

from fsm.controller import controller
from fsm.events import TopicDeletionRequest
from invariants import check_transition
from model_check import mutants, search
from model_check.checks import default_checks
from model_check.memo import Memos
from model_check.memo.steps import StepMemo
from model_check.scenario import load
from model_check.search import Options, bfs
from model_check.start import start
from model_check.world import World, WorldConfig, fingerprint
from model_check.world.fingerprint import Near, fingerprint_near
from model_check.world.global_view import global_view
from model_check.world.world import world_layout


def _levels(r: search.Result) -> list[tuple[int, int, int]]:
    return [(lv.depth, lv.generated, lv.new) for lv in r.levels]


def _unmemoised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every world built or restored is given no memos."""
    restore, init = World.restore.__func__, World.__init__  # type: ignore[attr-defined]

    def plain_restore(cls: type, snap: tuple, config: WorldConfig, memos: object = None
                      ) -> World:
        return restore(cls, snap, config)

    def plain_init(self: World, config: WorldConfig, memos: object = None) -> None:
        init(self, config)

    monkeypatch.setattr(World, "restore", classmethod(plain_restore))
    monkeypatch.setattr(World, "__init__", plain_init)


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[Memos]:
    """The ``Memos`` the searches make from now on."""
    made: list[Memos] = []

    class Recorded(Memos):
        def __post_init__(self) -> None:
            super().__post_init__()
            made.append(self)

    monkeypatch.setattr(search, "Memos", Recorded)
    return made


@pytest.mark.parametrize(("scenario", "ratio", "zk_ratio"),
                         [("smoke", 0.5, 0.5), ("mutants-restart", 4, 1)])
def test_a_search_finds_the_same_levels_with_and_without_the_step_memo(
        scenario: str, ratio: float, zk_ratio: float, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load(scenario)
    setup: list[dict[str, int]] = []

    def start_and_note(scenario: object, checks: object, memos: Memos) -> object:
        st = start(scenario, checks, memos)  # type: ignore[arg-type]
        setup.append(memos.steps.stats())  # the setup's steps are in the memo too
        return st

    with monkeypatch.context() as m:
        made = _recording(m)
        m.setattr(search, "start", start_and_note)
        memo = bfs(sc, default_checks(), Options(depth=7))
    [memos], [before] = made, setup
    stats = {k: n - before[k] for k, n in memos.steps.stats().items()}  # the search's
    with monkeypatch.context() as m:
        _unmemoised(m)
        plain = bfs(sc, default_checks(), Options(depth=7))
    assert _levels(memo) == _levels(plain)
    assert memo.verdict == plain.verdict == "pass"
    # the memo did the work: most core steps were answered from it
    assert stats["hits"] > ratio * stats["misses"] > 0, stats
    assert stats["zk_hits"] > zk_ratio * stats["zk_misses"] > 0, stats
    assert stats["ch_hits"] > zk_ratio * stats["ch_misses"] > 0, stats


def test_memoised_steps_give_the_worlds_the_plain_steps_give() -> None:
    """Every successor of every state to depth 4 of ``mutants-restart``, stepped once with
    the memo warm and once without it: the same snapshot, component by component."""
    st = start(load("mutants-restart"))
    frontier, seen = [st.snapshot], {fingerprint(st.snapshot)}
    memos = Memos(st.config)
    checked = 0
    for _ in range(4):
        nxt = []
        for snap in frontier:
            for action in World.restore(snap, st.config).enabled_actions():
                plain = World.restore(snap, st.config)
                plain.apply(action)
                for _twice in range(2):  # the second one is a hit
                    memo = World.restore(snap, st.config, memos)
                    memo.apply(action)
                    assert memo.snapshot() == plain.snapshot(), action.describe()
                checked += 1
                s = plain.snapshot()
                assert fingerprint_near(s, Near(snap)) == fingerprint(s)
                if fingerprint(s) not in seen:
                    seen.add(fingerprint(s))
                    nxt.append(s)
        frontier = nxt
    assert checked > 100


def test_a_world_given_no_memos_runs_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    st = start(load("smoke"))

    def never(*_args: object) -> None:
        raise AssertionError("a world without memos asked a memo")

    for name in ("controller_step", "broker_step", "zk_call", "ch_call", "ch_send"):
        monkeypatch.setattr(StepMemo, name, never)
    w = World.restore(st.snapshot, st.config)
    assert w.memos is None
    steps = 0
    for _ in range(30):
        actions = w.enabled_actions()
        if not actions:
            break
        w.apply(actions[-1])
        steps += 1
    assert steps > 5


def test_memos_know_the_code_they_answer_for(monkeypatch: pytest.MonkeyPatch) -> None:
    config = start(load("smoke")).config
    clean = Memos(config)
    assert clean.current() and Memos(config).token == clean.token  # same code, same token
    monkeypatch.setattr(controller, "_DISPATCH", {**controller._DISPATCH,
                                                  TopicDeletionRequest: lambda c, ev: None})
    patched = Memos(config)
    assert patched.token != clean.token and not clean.current()
    with mutants.patched("broker-ignores-broker-epoch"):
        mutant = Memos(config)
        assert mutant.current() and not patched.current()
        assert mutant.token not in (clean.token, patched.token)


def test_the_mutants_are_found_after_a_clean_run_in_the_same_process() -> None:
    """A memo filled by the clean core must not answer for a mutant (nor the reverse)."""
    m = mutants.get("broker-ignores-broker-epoch")
    sc = load(m.scenario)
    assert bfs(sc, default_checks()).verdict == "pass"
    with mutants.patched(m.name):
        assert bfs(sc, default_checks()).verdict == "violation"
    assert bfs(sc, default_checks()).verdict == "pass"


class _Recorder:
    """A ``GlobalView`` stand-in that records which attributes are read."""

    def __init__(self, view: object, read: set[str]) -> None:
        self._view, self._read = view, read

    def __getattr__(self, name: str) -> object:
        self._read.add(name)
        return getattr(self._view, name)


def test_the_transition_invariants_read_only_what_the_edge_memo_keys_on() -> None:
    """``Checks.on_edge`` is memoised by ``transition_parts`` (ZooKeeper's, the controllers'
    and the brokers' parts): every transition invariant must read nothing else."""
    st = start(load("mutants-restart"))
    read: set[str] = set()
    frontier = [st.snapshot]
    steps = 0
    for _ in range(4):
        nxt = []
        for snap in frontier:
            parent = World.restore(snap, st.config)
            before = global_view(parent)
            for action in parent.enabled_actions():
                child = World.restore(snap, st.config)
                child.apply(action)
                after = global_view(child)
                check_transition(_Recorder(before, read), _Recorder(after, read))  # type: ignore[arg-type]
                steps += 1
                nxt.append(child.snapshot())
        frontier = nxt[:50]
    assert steps > 100
    assert read <= {"zk", "controllers", "brokers", "broker", "broker_map",
                    "unclean_leader_election"}, read


def test_zookeeper_and_channel_calls_answered_from_the_memo_leave_them_snapshots() -> None:
    """The second crash of the same broker in the same state is answered from the memo: the
    world never restores ZooKeeper or the channels, and ends in the same state as the
    first."""
    st = start(load("mutants-restart"))
    w = World.restore(st.snapshot, st.config)
    crash = next(a for a in w.enabled_actions() if a.kind == "crash")
    memos = Memos(st.config)
    first = World.restore(st.snapshot, st.config, memos)
    first.apply(crash)
    again = World.restore(st.snapshot, st.config, memos)
    again.apply(crash)
    assert again._zk is None  # every ZooKeeper call of the step was a hit
    assert again._channels is None  # and so was the channels' clean-up
    assert again.snapshot() == first.snapshot()


def test_a_request_delivered_again_is_answered_and_its_response_sent_from_the_memo() -> None:
    """Delivering a request takes it off its channel and puts the broker's response on
    another (``StepMemo.ch_send``): once both are in the memo, delivering it again in the
    same state restores no channel, and the world ends as without the memo."""
    st = start(load("standard"))
    w = World.restore(st.snapshot, st.config)
    w.apply(next(a for a in w.enabled_actions() if a.kind == "crash"))  # requests follow
    found = None
    for _ in range(60):  # then progress (``enabled_actions`` lists it first)
        actions = w.enabled_actions()
        found = next((a for a in actions if a.kind == "deliver" and a.arg.kind == "req"), None)
        if found is not None:
            break
        w.apply(actions[0])
    assert found is not None
    snap, deliver = w.snapshot(), found
    plain = World.restore(snap, st.config)
    plain.apply(deliver)
    memos = Memos(st.config)
    # a memo serves the channels only while they are not restored: the first delivery
    # takes the request off with the real channels (and sends with them), the second
    # finds the take in the memo and records the send
    for _warm in range(2):
        first = World.restore(snap, st.config, memos)
        first.apply(deliver)
    misses = memos.steps.stats()["ch_misses"]
    again = World.restore(snap, st.config, memos)
    again.apply(deliver)
    assert memos.steps.stats()["ch_misses"] == misses
    assert again._channels is None
    assert again.snapshot() == first.snapshot() == plain.snapshot()
    assert len(plain.channel_keys()) >= 1  # the response is on its way


def test_edge_ids_name_the_transition_key_and_are_never_reused() -> None:
    """``Checks.edge_id``: views whose transition keys are equal get one number, views of
    another key another one -- also after the tables are dropped -- and a view numbered by
    another ``Checks`` (another search, another process) is numbered afresh."""
    st = start(load("smoke"))
    checks = default_checks()
    root = World.restore(st.snapshot, st.config)
    a, b = global_view(root), global_view(World.restore(st.snapshot, st.config))
    child = World.restore(st.snapshot, st.config)
    child.apply(next(x for x in child.enabled_actions() if x.kind == "crash"))
    c = global_view(child)  # a crash changes the broker's and the controller's parts
    assert checks.edge_key(a) == checks.edge_key(b) != checks.edge_key(c)
    assert checks.edge_id(a) == checks.edge_id(b) == checks.edge_id(a)
    assert checks.edge_id(c) != checks.edge_id(a)
    first_c = checks.edge_id(c)
    checks._edge_ids.by_key.clear()  # as when the table is full
    fresh = global_view(World.restore(st.snapshot, st.config))
    assert checks.edge_id(fresh) not in (checks.edge_id(a), first_c)
    # another search numbers a view of ``c``'s key first: it gets 1, the number ``a``
    # carries from ``checks`` -- read as such, ``a`` and ``c`` would look alike there
    other = default_checks()
    d = global_view(World.restore(child.snapshot(), st.config))
    assert other.edge_key(d) == checks.edge_key(c)
    assert other.edge_id(d) == checks.edge_id(a) == 1
    assert other.edge_id(a) != other.edge_id(d)
    assert other.on_edge(a, c) == checks.on_edge(a, c)
    # the numbers live in the ``Checks``' own tables: nothing is written into the views
    assert not [k for view in (a, b, c, d, fresh) for k in vars(view) if k.startswith("_")]


def test_canonical_snapshots_are_equal_and_share_this_processs_components() -> None:
    """A state from elsewhere (here: a deep copy, as a Spark bundle unpacks it) maps onto
    the components this process already holds."""
    import marshal

    st = start(load("smoke"))
    w = World.restore(st.snapshot, st.config)
    w.apply(w.enabled_actions()[0])
    snap = w.snapshot()
    copy = marshal.loads(marshal.dumps(snap))
    layout = world_layout(len(st.config.broker_ids))
    zk, rest = layout.zookeeper, layout.rest
    assert copy == snap and copy[zk] is not snap[zk]
    canon = World.canonical(copy)
    assert canon == snap
    assert canon[zk] is snap[zk] and canon[rest] is snap[rest]
    assert World.canonical(copy) == canon
    memos = Memos(st.config)  # remembers each component's by its identity too
    for _twice in range(2):
        again = World.canonical(copy, memos)
        assert again == snap and again[zk] is snap[zk] and again[rest] is snap[rest]


def test_a_quiet_step_reaches_the_same_world_and_leaves_lines_out() -> None:
    """``apply(action, describe=False)`` (the search's) reaches the same world; of the lines
    it leaves the costly ones out (and shortens the rest): what it says is, in order, a part
    of what the described step says."""
    st = start(load("mutants-restart"))
    frontier = [st.snapshot]
    quieter = 0
    for _ in range(3):
        nxt = []
        for snap in frontier:
            for action in World.restore(snap, st.config).enabled_actions():
                loud = World.restore(snap, st.config)
                quiet = World.restore(snap, st.config)
                said = loud.apply(action)
                short = quiet.apply(action, describe=False)
                assert quiet.snapshot() == loud.snapshot()
                heads = iter(line.split(" ")[:2] for line in said)
                assert all(line.split(" ")[:2] in heads for line in short), (short, said)
                quieter += len(short) < len(said)
                nxt.append(loud.snapshot())
        frontier = nxt[:30]
    assert quieter > 0


def test_memos_counting_into_another_coverage_share_what_they_remember() -> None:
    """A Spark task counts into its own ``Coverage`` with its run's memos
    (``Memos.counting``): the same tables, another count."""
    from model_check.coverage import Coverage

    st = start(load("smoke"))
    memos = Memos(st.config)
    cov = Coverage()
    counting = memos.counting(cov)
    assert memos.counting(None) is memos and counting.counting(cov) is counting
    assert counting.coverage is cov and memos.coverage is None
    assert (counting.steps, counting.facts, counting.views, counting.templates,
            counting.renames, counting.token) == (memos.steps, memos.facts, memos.views,
                                                  memos.templates, memos.renames, memos.token)
    w = World.restore(st.snapshot, st.config, counting)
    w.apply(next(a for a in w.enabled_actions() if a.kind == "crash"))
    for _ in range(10):  # then progress: the cores handle what the crash set off
        w.apply(w.enabled_actions()[0])
    assert sum(cov.steps.values()) > 0 and memos.steps.stats()["misses"] > 0
