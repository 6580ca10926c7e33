"""The cores' step memo (``model_check.world.step_memo``) and the checks' edge memo change
no answer: the same states, levels and verdicts with and without them; a patched core gets
a memo of its own; nothing is memoised outside a search."""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from fsm.controller import controller
from fsm.events import TopicDeletionRequest
from invariants import check_transition
from model_check import mutants, search
from model_check.checks import default_checks
from model_check.scenario import load
from model_check.search import Options, bfs
from model_check.start import start
from model_check.world import World, fingerprint, step_memo
from model_check.world.fingerprint import Near, fingerprint_near
from model_check.world.global_view import global_view
from model_check.world.world import world_layout


def _levels(r: search.Result) -> list[tuple[int, int, int]]:
    return [(lv.depth, lv.generated, lv.new) for lv in r.levels]


def _unmemoised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "memoised", lambda _config: nullcontext())


@pytest.mark.parametrize(("scenario", "ratio", "zk_ratio"),
                         [("smoke", 0.5, 0.5), ("mutants-restart", 4, 1)])
def test_a_search_finds_the_same_levels_with_and_without_the_step_memo(
        scenario: str, ratio: float, zk_ratio: float, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load(scenario)
    memo = bfs(sc, default_checks(), Options(depth=7))
    stats = step_memo.stats()
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
    checked = 0
    for _ in range(4):
        nxt = []
        for snap in frontier:
            for action in World.restore(snap, st.config).enabled_actions():
                plain = World.restore(snap, st.config)
                plain.apply(action)
                with step_memo.memoised(st.config):
                    for _twice in range(2):  # the second one is a hit
                        memo = World.restore(snap, st.config)
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


def test_nothing_is_memoised_outside_a_search() -> None:
    st = start(load("smoke"))
    before = step_memo.stats()
    w = World.restore(st.snapshot, st.config)
    for _ in range(5):
        actions = w.enabled_actions()
        if not actions:
            break
        w.apply(actions[0])
    assert step_memo.stats() == before


def test_a_patched_core_gets_a_memo_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    config = start(load("smoke")).config
    with step_memo.memoised(config) as clean:
        pass
    with step_memo.memoised(config) as again:
        assert again is clean  # same code, same config: the memo is reused
    monkeypatch.setattr(controller, "_DISPATCH", {**controller._DISPATCH,
                                                  TopicDeletionRequest: lambda c, ev: None})
    with step_memo.memoised(config) as patched:
        assert patched is not clean and patched.token != clean.token
    with mutants.patched("broker-ignores-broker-epoch"), \
            step_memo.memoised(config) as mutant:
        assert mutant is not clean and mutant is not patched


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
    with step_memo.memoised(st.config):
        first = World.restore(st.snapshot, st.config)
        first.apply(crash)
        again = World.restore(st.snapshot, st.config)
        again.apply(crash)
        assert again._zk is None  # every ZooKeeper call of the step was a hit
        assert again._channels is None  # and so was the channels' clean-up
        assert again.snapshot() == first.snapshot()


def test_a_request_delivered_again_is_answered_and_its_response_sent_from_the_memo() -> None:
    """Delivering a request takes it off its channel and puts the broker's response on
    another (``step_memo.ch_send``): once both are in the memo, delivering it again in the
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
    with step_memo.memoised(st.config):
        # a memo serves the channels only while they are not restored: the first delivery
        # takes the request off with the real channels (and sends with them), the second
        # finds the take in the memo and records the send
        for _warm in range(2):
            first = World.restore(snap, st.config)
            first.apply(deliver)
        misses = step_memo.stats()["ch_misses"]
        again = World.restore(snap, st.config)
        again.apply(deliver)
        assert step_memo.stats()["ch_misses"] == misses
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
