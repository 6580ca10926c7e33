"""Nothing the outside world can build makes the broker core raise; malformed requests are
answered with an error and change nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.broker import BrokerCore
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerWriteResult,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    RequestReceived,
    TimerFired,
    WriteFailure,
)
from fsm.requests import (
    ControlledShutdownResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo

from .builders import CE, EPOCH, lai, lai_request, loaded, running, send, stop_request
from .strategies import events

junk_ints = st.integers(-3, 4)
junk_ids = st.lists(junk_ints, max_size=4).map(tuple)
junk_names = st.sampled_from(["t", "", "u"])
junk = st.one_of(st.none(), st.text(max_size=2), junk_ints, st.lists(junk_ints, max_size=2))
junk_tps = st.one_of(st.tuples(junk_names, junk_ints), st.tuples(junk, junk), junk)

junk_lai = st.builds(LeaderAndIsrPartition, junk_names, junk_ints, junk_ints, junk_ints,
                     junk_ints, junk_ids, junk_ints, junk_ids, st.booleans())
junk_um = st.builds(UpdateMetadataPartition, junk_names, junk_ints, junk_ints,
                    st.integers(-3, 4), junk_ints, junk_ids, junk_ints, junk_ids, junk_ids)
junk_stamps = st.one_of(st.just(EPOCH), junk)
junk_requests = st.one_of(
    st.builds(UpdateMetadataRequest, junk, st.one_of(st.just(CE), junk), junk_stamps,
              st.just(()), st.just(())),
    st.builds(LeaderAndIsrRequest, junk_ints, st.one_of(st.just(CE), junk), junk_stamps,
              st.just(()), st.just(())),
    st.builds(LeaderAndIsrRequest, junk_ints, st.just(CE), st.just(EPOCH),
              st.one_of(st.lists(junk_lai, max_size=4).map(tuple), junk), st.just(())),
    st.builds(StopReplicaRequest, junk_ints, st.just(CE), st.just(EPOCH), st.booleans(),
              st.one_of(st.lists(junk_tps, max_size=4).map(tuple), junk)),
    st.builds(UpdateMetadataRequest, junk_ints, st.just(CE), st.just(EPOCH),
              st.one_of(st.lists(junk_um, max_size=4).map(tuple), junk),
              st.one_of(st.lists(st.builds(BrokerInfo, junk_ints, junk_ints),
                                 max_size=3).map(tuple), junk)),
    junk,
)


@settings(max_examples=400, deadline=None)
@given(junk_requests)
def test_malformed_requests_never_raise_and_invalid_changes_nothing(request) -> None:
    core = running()
    send(core, lai_request(lai(("t", 0)), lai(("t", 1), leader=2, leader_epoch=3)))
    before = core.snapshot()
    views = dict(core.replicas())
    response = send(core, request)
    if response.error is not ErrorCode.NONE:
        assert core.snapshot() == before
    else:
        # applied: untouched partitions keep their state; invalid partitions change nothing
        for tp, code in response.partition_errors:
            if code is not ErrorCode.NONE:
                assert core.replica(tp) == views.get(tp)


def _to_pending() -> list:
    """Walk into PENDING_CONTROLLED_SHUTDOWN (if the first events allow) so that the junk
    reaches the shutdown handlers too."""
    from fsm.events import BrokerStarted, ShutdownRequested

    return [BrokerStarted(), *([loaded()] * 1), BrokerRegistered(EPOCH), ShutdownRequested()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    events,
    st.builds(IsrChangeWanted, junk_tps, st.one_of(junk_ids, junk)),
    st.builds(BrokerWriteResult, st.one_of(junk_ints, junk),
              st.one_of(junk, st.lists(st.one_of(junk, st.builds(
                  WriteFailure, junk, junk, junk, junk)), max_size=2).map(tuple))),
    st.builds(ControlledShutdownAnswered, st.one_of(junk, st.builds(
        ControlledShutdownResponse, st.sampled_from(list(ErrorCode)), junk)), junk),
    st.builds(TimerFired, junk),
    st.builds(BrokerRegistered, junk),
    st.builds(BrokerMetadataLoaded, st.one_of(junk, st.lists(st.tuples(junk, junk)).map(tuple)),
              st.one_of(junk, st.lists(st.tuples(junk_tps, junk)).map(tuple))),
    st.builds(RequestReceived, junk_requests, st.integers(0, 3)),
    junk,
), max_size=25))
def test_random_event_sequences_never_raise(evs: list) -> None:
    core = BrokerCore(running().config)
    for ev in [*evs[:3], *_to_pending(), *evs[3:]]:
        core.handle(ev)
        assert core.applied_ok()


def test_documented_examples() -> None:
    core = running()
    before = core.snapshot()
    assert send(core, stop_request(("t", -1))).error is ErrorCode.INVALID_REQUEST
    assert send(core, stop_request(("", 0))).error is ErrorCode.INVALID_REQUEST
    assert send(core, "not a request").error is ErrorCode.INVALID_REQUEST
    assert core.snapshot() == before
