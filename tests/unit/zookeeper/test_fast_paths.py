"""The adapter's fast paths give exactly what the plain ones give.

A failover decodes 100,000 partition states and 1,000 topics, and a broker failure writes tens of
thousands of states, so the codecs, the multiRead/multi wire code and the chroot handling have
fast paths (C-level calls, no per-item Python). Each is checked here against its reference:
the codecs' strict path (forced by switching the fast path off), kazoo's own serialization and
path handling, and a plain greedy batch cutter.
"""

from __future__ import annotations

import json
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.exceptions import BadVersionError, NoNodeError, RolledBackError
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import (
    CheckVersion,
    Create,
    Delete,
    MultiHeader,
    SetData,
    Transaction,
    multiheader_struct,
    stat_struct,
    write_string,
)
from kazoo.security import OPEN_ACL_UNSAFE

from adapters.zookeeper import multi_read, writer
from adapters.zookeeper.codec import (
    ZnodeDecodeError,
    ZnodeEncodeError,
    decode,
    decoders,
    topic_layout,
)
from adapters.zookeeper.codec import fields as codec_fields
from adapters.zookeeper.codec.encoders import encode_partition_state
from adapters.zookeeper.codec.fields import dumps
from adapters.zookeeper.codec.paths import PARTITION_STATE, classify
from fsm import zk_paths
from fsm.values import LeaderAndIsr

STATE = zk_paths.partition_state("t", 0)
TOPIC = zk_paths.topic("t")

# ------------------------------------------------------------------ decoders: fast == strict


def outcome(path: str, raw: bytes) -> object:
    try:
        return decode(path, raw)
    except ZnodeDecodeError as exc:
        return ("error", str(exc))


def strict_outcome(path: str, raw: bytes) -> object:
    """The outcome with every fast path switched off (the strict, item-by-item checks)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(topic_layout, "assignment", lambda data: None)
        m.setattr(decoders, "_quick_object", lambda data: None)
        m.setattr(decoders, "fast_assignment", lambda value: None)
        m.setattr(decoders, "fast_partition_key", lambda key: None)
        m.setattr(decoders, "fast_broker_ids", lambda value: None)
        m.setattr(codec_fields, "fast_broker_ids", lambda value: None)
        m.setattr(codec_fields, "fast_partition_key", lambda key: None)
        return outcome(path, raw)


TRICKY = [-1, -2, 2**31, 10**20, True, False, 1.0, "1", None, float("nan"), [], {}]
KEYS = ["01", "-1", "", "x", "99999999999", "4294967296", "\u0661", " 1", "0"]


def ids(rng: random.Random) -> list[int]:
    return rng.sample(range(6), rng.randint(1, 3))


def mutate(obj: dict, rng: random.Random, fields: list[str]) -> dict:
    """Up to three random edits of a valid object: a field set to a tricky value, removed,
    added, or a list given a repeated or tricky item."""
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        how = rng.randrange(5)
        if how == 0:
            obj[rng.choice(fields)] = rng.choice(TRICKY)
        elif how == 1 and obj:
            del obj[rng.choice(list(obj))]
        elif how == 2:
            obj[rng.choice(["extra", *fields])] = rng.choice([1, "x", float("nan"), [], {}])
        else:
            lists = [v for v in obj.values() if isinstance(v, list) and v]
            lists += [x for v in obj.values() if isinstance(v, dict) for x in v.values()
                      if isinstance(x, list) and x]
            if lists:
                target = rng.choice(lists)
                target.append(rng.choice([target[0], *TRICKY[:7]]))
    return obj


def render(obj: dict, rng: random.Random) -> bytes:
    """JSON text in several spellings: compact or spaced, a key repeated (top level or inside
    an object), surrounding whitespace, or not UTF-8."""
    text = json.dumps(obj, separators=rng.choice([(",", ":"), (", ", ": ")]), allow_nan=True)
    how = rng.randrange(8)
    if how == 0 and obj:
        key = rng.choice(list(obj))
        text = text[:-1] + "," + json.dumps(key) + ":" + json.dumps(obj[key]) + "}"
    elif how == 1 and '{"0":' in text.replace(" ", ""):
        text = text.replace(" ", "").replace('{"0":', '{"0":[4],"0":', 1)
    elif how == 2:
        text = " " + text
    elif how == 3:
        text += "\n"
    elif how == 4:
        return text.encode("utf-16")
    return text.encode()


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_partition_state_fast_decode_agrees_with_strict(rng: random.Random) -> None:
    obj = {"version": 1, "leader": rng.choice([-1, 0, 3]), "leader_epoch": rng.randint(0, 9),
           "controller_epoch": rng.randint(0, 9), "isr": ids(rng)}
    raw = render(mutate(obj, rng, list(obj)), rng)
    assert outcome(STATE, raw) == strict_outcome(STATE, raw)


def assignment(rng: random.Random) -> dict[str, list[int]]:
    out = {str(p): ids(rng) for p in range(rng.randint(0, 4))}
    if rng.random() < 0.2:
        out[rng.choice(KEYS)] = ids(rng)
    return out


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_topic_fast_decode_agrees_with_strict(rng: random.Random) -> None:
    obj: dict = {"version": rng.choice([1, 2]), "partitions": assignment(rng)}
    if obj["version"] == 2:
        obj["adding_replicas"], obj["removing_replicas"] = assignment(rng), assignment(rng)
    raw = render(mutate(obj, rng, list(obj)), rng)
    assert outcome(TOPIC, raw) == strict_outcome(TOPIC, raw)


_LAYOUT_EDITS = [
    (b"[", b"[0"), (b",", b",0"), (b":[", b":[-"), (b'"', b'"0'), (b'"', b'" '), (b",", b", "),
    (b"],", b"],,"), (b"],", b"]],"), (b'":[', b'":[]'), (b"]", b",]"), (b"1", b"\\u0031"),
    (b"1", b"\xd9\xa1"), (b"2", b"2147483648"), (b"3", b"99999999999"), (b"1", b"1.0"),
    (b"1", b"1e0"), (b"0", b"00000000000"), (b"{}", b'{"0":[1]}'), (b":2,", b":3,"),
]


@st.composite
def topic_layouts(draw: st.DrawFn) -> bytes:
    """A topic znode in Kafka's layout (version 1 or 2, partitions in any order, ids and broker
    ids of any size), then zero to three byte edits: leading zeros, signs, spaces, escapes,
    non-ASCII digits, values out of range, floats, an empty or doubled list, a partition twice,
    reassignments in flight, another version."""
    ids = draw(st.lists(st.one_of(st.integers(0, 20), st.integers(0, 2**31 - 1)), min_size=1,
                        max_size=12, unique=True))
    replicas = st.lists(st.one_of(st.integers(0, 9), st.integers(0, 2**31 - 1)), min_size=1,
                        max_size=4, unique=True)
    parts = ",".join(f'"{p}":{json.dumps(draw(replicas), separators=(",", ":"))}'
                     for p in ids)
    raw = ('{"version":2,"partitions":{%s},"adding_replicas":{},"removing_replicas":{}}'
           if draw(st.booleans()) else '{"version":1,"partitions":{%s}}') % parts
    data = raw.encode()
    for _ in range(draw(st.integers(0, 3))):
        old, new = draw(st.sampled_from(_LAYOUT_EDITS))
        at = [i for i in range(len(data)) if data.startswith(old, i)]
        if at:
            i = draw(st.sampled_from(at))
            data = data[:i] + new + data[i + len(old):]
    if draw(st.booleans()) and data.count(b'":[') > 1:  # a partition twice
        data = data.replace(b'{"', b'{"' + data.split(b'{"')[2].split(b"],")[0] + b'],"', 1)
    return data


@settings(max_examples=500, deadline=None)
@given(topic_layouts())
def test_topic_layout_reader_agrees_with_the_parser(raw: bytes) -> None:
    """``topic_layout.assignment`` is the parser's answer or None (and then the parser's
    answer, error or value, is what ``decode`` gives)."""
    fast = topic_layout.assignment(raw)
    want = strict_outcome(TOPIC, raw)
    assert fast is None or fast == want, (raw, fast, want)
    assert outcome(TOPIC, raw) == want


def test_topic_layout_reader_takes_kafkas_layout_and_memoises_within_bounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fsm.values import TopicAssignment

    a = TopicAssignment(tuple((p, tuple((p + k) % 7 for k in range(3))) for p in range(30)))
    raw = dumps({"version": 2, "partitions": {str(p): list(r) for p, r in a.partitions},
                 "adding_replicas": {}, "removing_replicas": {}})
    assert topic_layout.assignment(raw) == a  # the layout is taken, not left to the parser
    monkeypatch.setattr(topic_layout, "_MAX_MEMO", 5)
    monkeypatch.setattr(topic_layout, "_MEMO", topic_layout._Memo())
    for _ in range(2):
        assert topic_layout.assignment(raw) == a
        assert len(topic_layout._MEMO.ids) <= 5 and len(topic_layout._MEMO.replicas) <= 5
    shuffled = dumps({"version": 1, "partitions": {str(p): list(r)
                                                    for p, r in reversed(a.partitions)}})
    assert topic_layout.assignment(shuffled) == a  # sorted by partition


def test_fast_decode_refuses_what_the_strict_path_refuses() -> None:
    """Inputs the C parser alone would accept: a key twice, NaN, a bool, leading whitespace."""
    cases = [
        (STATE, b'{"version":1,"leader":1,"leader_epoch":1,"controller_epoch":1,"isr":[1],'
                b'"leader":2}', "twice"),
        (STATE, b'{"version":1,"leader":1,"leader_epoch":NaN,"controller_epoch":1,"isr":[1]}',
         "not JSON"),
        (STATE, b'{"version":1,"leader":true,"leader_epoch":1,"controller_epoch":1,"isr":[1]}',
         "'leader' must be an integer"),
        (TOPIC, b'{"version":1,"partitions":{"0":[1],"0":[2]}}', "twice"),
        (TOPIC, b'{"version":1,"partitions":{"0":[1],"00":[2]}}', "twice"),
        (TOPIC, b'{"version":1,"partitions":{"0":[01]}}', "not JSON"),
        (TOPIC, b'{"version":1,"partitions":{"0":[1,1]}}', "twice"),
        (TOPIC, b'{"version":1,"partitions":{"0":[]}}', "empty"),
        (TOPIC, b'{"version":1,"partitions":{"0":[2147483648]}}', "broker id"),
        (TOPIC, b'{"version":1,"partitions":{"0":[1,true]}}', "broker id"),
        (TOPIC, b'{"version":1,"partitions":{"0":[1]},"x":NaN}', "not JSON"),
        (TOPIC, b'{"version":2,"partitions":{"0":[1]},"adding_replicas":{"0":[2]},'
                b'"removing_replicas":{"0":[2,2]}}', "twice"),
    ]
    for path, raw, words in cases:
        with pytest.raises(ZnodeDecodeError, match=words):
            decode(path, raw)
    assert decode(STATE, b' {"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,'
                         b'"isr":[1]}') == LeaderAndIsr(1, 0, (1,), 1)


# ------------------------------------------------------------------ encoder


@given(st.integers(-1, 2**31 - 1), st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1),
       st.lists(st.integers(0, 2**31 - 1), max_size=5, unique=True))
def test_partition_state_fast_encode_is_kafkas_json(
    leader: int, epoch: int, cepoch: int, isr: list[int]
) -> None:
    li = LeaderAndIsr(leader, epoch, tuple(isr), cepoch)
    assert encode_partition_state(STATE, li) == dumps(
        {"version": 1, "leader": leader, "leader_epoch": epoch, "controller_epoch": cepoch,
         "isr": isr})


@pytest.mark.parametrize("li", [
    LeaderAndIsr(True, 0, (1,), 0), LeaderAndIsr(1, 0, (True,), 0), LeaderAndIsr(1, 0, (1, 1), 0),
    LeaderAndIsr(1, -1, (1,), 0), LeaderAndIsr(1, 0, (2**31,), 0), LeaderAndIsr(1, 0, (1,), 1.0),
])
def test_partition_state_fast_encode_refuses_bad_values(li: LeaderAndIsr) -> None:
    with pytest.raises(ZnodeEncodeError):
        encode_partition_state(STATE, li)


# ------------------------------------------------------------------ chroot and batches


PATHS = ["/", "/a", "/a/b", "a", "/a/", "//a", "/a/./b", "/a/../b", "/.x", "/a\n/b", "", "/é",
         "/a\n", "\n/a", "/a b"]


def kazoo_or_error(chroot: str, path: str) -> str:
    try:
        return _prefix_root(chroot, path)
    except ValueError:
        return "ValueError"


@pytest.mark.parametrize("chroot", ["", "/fo", "/fo/bar", "fo", "/fo/", "/"])
def test_full_path_is_kazoos_prefix_root(chroot: str) -> None:
    rng = random.Random(7)
    for path in PATHS:
        try:
            got = multi_read.full_path(chroot, path)
        except ValueError:
            got = "ValueError"
        assert got == kazoo_or_error(chroot, path), (chroot, path)
    for _ in range(2000):
        paths = [rng.choice(PATHS) for _ in range(rng.randint(1, 4))]
        want: object = [kazoo_or_error(chroot, p) for p in paths]
        if "ValueError" in want:  # type: ignore[operator]
            want = "ValueError"
        try:
            got: object = multi_read.full_paths(chroot, paths)
        except ValueError:
            got = "ValueError"
        assert got == want, (chroot, paths)


def greedy_batches(paths: list[str], max_bytes: int, max_paths: int) -> list[tuple[int, int]]:
    base = multi_read.FRAME_OVERHEAD + multi_read.HEADER_BYTES
    out, start, size = [], 0, base
    for i, path in enumerate(paths):
        cost = multi_read.REQUEST_PATH_OVERHEAD + len(path.encode())
        if base + cost > max_bytes:
            raise ValueError(path)
        if i > start and (i - start >= max_paths or size + cost > max_bytes):
            out.append((start, i))
            start, size = i, base
        size += cost
    if start < len(paths):
        out.append((start, len(paths)))
    return out


def test_cut_batches_is_the_greedy_cut() -> None:
    rng = random.Random(11)
    for _ in range(500):
        paths = ["/" + "x" * rng.randint(1, 3000) + ("é" if rng.random() < 0.1 else "")
                 for _ in range(rng.randint(0, 200))]
        max_bytes, max_paths = rng.randint(4000, 20000), rng.randint(1, 50)
        try:
            want: object = greedy_batches(paths, max_bytes, max_paths)
        except ValueError:
            want = "ValueError"
        try:
            got: object = multi_read.cut_batches(paths, max_bytes, max_paths)
        except ValueError:
            got = "ValueError"
        assert got == want
        if isinstance(got, list):
            assert all(multi_read.request_bytes(paths[a:b]) <= max_bytes for a, b in got)


# ------------------------------------------------------------------ wire forms


STAT = (1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11)


def test_multi_read_request_and_reply_bytes() -> None:
    paths = ["/a", "/é/b"]
    want = b"".join(multiheader_struct.pack(4, False, -1) + write_string(p) + b"\0" for p in paths)
    want += multiheader_struct.pack(-1, True, -1)
    assert multi_read.MultiRead(multi_read.GET_DATA, paths).serialize() == want
    reply = (multiheader_struct.pack(4, False, 0) + struct.pack(">i", 3) + b"abc"
             + stat_struct.pack(*STAT)
             + multiheader_struct.pack(4, False, 0) + struct.pack(">i", -1) + stat_struct.pack(*STAT)
             + multiheader_struct.pack(-1, False, NoNodeError.code) + struct.pack(">i", -101)
             + multiheader_struct.pack(-1, True, -1))
    got = multi_read.MultiRead.deserialize(b"xx" + reply, 2)
    assert [r[0] if isinstance(r, tuple) else type(r) for r in got] == [b"abc", b"", NoNodeError]
    assert got[0][1].version == 5


def test_writer_payloads_are_kazoos_bytes() -> None:
    pairs = [
        (Create("/a/b", b"xyz", OPEN_ACL_UNSAFE, 3),
         writer._payload(writer.CREATE, "/a/b", b"xyz", flags=3)),
        (Create("/é", b"", OPEN_ACL_UNSAFE, 0), writer._payload(writer.CREATE, "/é")),
        (SetData("/a/b", b"x" * 10, 7), writer._payload(writer.SET_DATA, "/a/b", b"x" * 10, 7)),
        (Delete("/a/b", -1), writer._payload(writer.DELETE, "/a/b")),
        (CheckVersion("/controller_epoch", 4),
         writer._payload(writer.CHECK, "/controller_epoch", version=4)),
    ]
    for request, mine in pairs:
        assert bytes(MultiHeader(request.type, False, -1).serialize() + request.serialize()) == mine
    multi = writer._Multi([mine for _, mine in pairs])
    assert multi.serialize() == bytes(Transaction([r for r, _ in pairs]).serialize())
    assert multi.type == Transaction.type  # kazoo strips the chroot from created paths


def test_writer_reply_is_read_as_kazoos_transaction() -> None:
    reply = (multiheader_struct.pack(13, False, 0)
             + multiheader_struct.pack(1, False, 0) + write_string("/fo/a")
             + multiheader_struct.pack(5, False, 0) + stat_struct.pack(*STAT)
             + multiheader_struct.pack(2, False, 0)
             + multiheader_struct.pack(-1, False, 0) + struct.pack(">i", RolledBackError.code)
             + multiheader_struct.pack(-1, False, 0) + struct.pack(">i", BadVersionError.code)
             + multiheader_struct.pack(-1, True, -1))
    mine, theirs = writer._Multi.deserialize(reply, 0), Transaction.deserialize(reply, 0)
    assert [type(r) if isinstance(r, Exception) else r for r in mine] == \
        [type(r) if isinstance(r, Exception) else r for r in theirs]
    assert [type(r).__name__ for r in mine[-2:]] == ["RolledBackError", "BadVersionError"]


@pytest.mark.parametrize("path", [
    "/brokers/topics/t/partitions/0/state", "/brokers/topics/t/partitions/01/state",
    "/brokers/topics/t/partitions/2147483648/state", "/brokers/topics/t/partitions/2147483647/state",
    "/brokers/topics/a b/partitions/0/state", "/brokers/topics/t/partitions/0/x/state",
    "/brokers/topics/t/partitions//state", "/brokers/topics//partitions/0/state",
    "/brokers/topics/../partitions/0/state", "/brokers/topics/./partitions/0/state",
    "/brokers/topics/t/partitions/0", "/brokers/topics/t/partitions/\u0663/state",
    "/brokers/topics/" + "x" * 250 + "/partitions/0/state", "/brokers/topics/t/x/partitions/0/state",
    "/brokers/topics/t/partitions/-1/state", "/brokers/topics/t/partitions/ 1/state",
])
def test_writer_state_path_check_is_the_codecs(path: str) -> None:
    assert writer._is_state_path(path) == (classify(path) == PARTITION_STATE)


# ------------------------------------------------------------------ lean multiRead, bulk decode

_REPLY_ITEMS = st.lists(st.one_of(
    st.tuples(st.just("data"), st.one_of(st.none(), st.binary(max_size=40)),
              st.tuples(*[st.integers(-2**63, 2**63 - 1)] * 4, *[st.integers(-2**31, 2**31 - 1)] * 3,
                        st.integers(-2**63, 2**63 - 1), *[st.integers(-2**31, 2**31 - 1)] * 2,
                        st.integers(-2**63, 2**63 - 1))),
    st.tuples(st.just("error"), st.sampled_from([NoNodeError.code, -102, -101]), st.none()),
), max_size=30)


def _reply(items: list[tuple[str, object, object]]) -> bytes:
    out = b""
    for kind, value, stat in items:
        if kind == "data":
            data = value if value is not None else None
            out += multiheader_struct.pack(4, False, 0)
            out += struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data
            out += stat_struct.pack(*stat)
        else:
            out += multiheader_struct.pack(-1, False, value) + struct.pack(">i", value)
    return out + multiheader_struct.pack(-1, True, -1)


@settings(max_examples=300, deadline=None)
@given(_REPLY_ITEMS, st.binary(max_size=5))
def test_lean_multi_read_reply_is_the_full_replys_data_version_czxid(items, prefix) -> None:
    buf = prefix + _reply(items)
    full = multi_read.MultiRead.deserialize(buf, len(prefix))
    lean = multi_read.MultiReadNodes.deserialize(buf, len(prefix))
    assert len(lean) == len(full) == len(items)
    for f, n in zip(full, lean, strict=True):
        if isinstance(f, tuple):
            assert type(n) is multi_read.Node
            assert n == (f[0], f[1].version, f[1].czxid)
        else:
            assert type(n) is type(f)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=20).map(lambda s: "/" + s), max_size=20),
       st.sampled_from([multi_read.GET_DATA, multi_read.GET_CHILDREN]))
def test_request_serialization_is_the_per_path_form(paths, op_type) -> None:
    want = b"".join(multiheader_struct.pack(op_type, False, -1) + write_string(p) + b"\0"
                    for p in paths) + multiheader_struct.pack(-1, True, -1)
    assert multi_read.MultiRead(op_type, paths).serialize() == want
    if op_type == multi_read.GET_DATA:
        assert multi_read.MultiReadNodes(paths).serialize() == want


def test_lean_reply_refuses_an_unknown_result_type() -> None:
    with pytest.raises(ValueError, match="unexpected result type 8"):
        multi_read.MultiReadNodes.deserialize(
            multiheader_struct.pack(8, False, 0) + struct.pack(">i", 0)
            + multiheader_struct.pack(-1, True, -1), 0)


def _state_bytes(rng: random.Random) -> bytes:
    li = LeaderAndIsr(rng.randrange(-1, 4), rng.randrange(3), tuple(ids(rng)), rng.randrange(2))
    good = encode_partition_state(STATE, li)
    how = rng.randrange(6)
    if how == 0:
        return good.replace(b"1", b"1.0", 1)  # malformed (a float)
    if how == 1:
        return b"{" + good  # malformed JSON
    return good


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_bulk_decode_is_the_decoders_answer(rng: random.Random) -> None:
    """``decode_nodes`` (memo shortcut for partition states) == ``ZnodeDecoder`` path by path,
    including state bytes at other paths, malformed states, absent and unreadable znodes."""
    from adapters.zookeeper.reads import ZkNode, ZnodeDecoder, decode_nodes

    pool = [_state_bytes(rng) for _ in range(6)]
    paths, replies = [], []
    for i in range(rng.randrange(1, 60)):
        path = rng.choice([zk_paths.partition_state("t", i), zk_paths.topic(f"t{i}"),
                           zk_paths.broker(i), f"/x/{i}/state", "/a/b/c/d/e/f/state"])
        data = rng.choice([*pool, b"", encode_partition_state(STATE, LeaderAndIsr(1, 0, (1,), 0))])
        paths.append(path)
        replies.append(rng.choice([multi_read.Node(data, rng.randrange(5), i), NoNodeError(),
                                   multi_read.Node(data, 0, i)]))
    start = rng.randrange(3)
    paths = ["/pad"] * start + paths
    fast = ZnodeDecoder()
    for _ in range(2):  # second round: everything in the memo
        got: list[ZkNode | None] = [None] * len(paths)
        decode_nodes(fast, paths, start, replies, got)
        strict = ZnodeDecoder()
        want = [None] * start + [
            ZkNode(strict(p, r.data), r.version, r.czxid) if isinstance(r, multi_read.Node) else None
            for p, r in zip(paths[start:], replies, strict=True)]
        assert got == want
        assert all(type(n) is ZkNode for n in got if n is not None)


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_bulk_decode_of_partition_state_batches_is_the_decoders_answer(rng: random.Random) -> None:
    """A failover's batches: partition state paths only, most bytes already in the memo (the
    batch built at C level), sometimes one absent znode, one other path or one new bytes
    value among them (znode by znode): the same as ``ZnodeDecoder`` path by path."""
    from adapters.zookeeper.reads import ZkNode, ZnodeDecoder, decode_nodes

    pool = [_state_bytes(rng) for _ in range(4)]
    fast = ZnodeDecoder()
    for data in pool:
        fast(STATE, data)  # in the memo (a malformed one stays out: a miss)
    n = rng.randrange(1, 40)
    paths = [zk_paths.partition_state(f"t{rng.randrange(3)}", i) for i in range(n)]
    replies: list[object] = [multi_read.Node(rng.choice(pool), rng.randrange(3), i)
                             for i in range(n)]
    odd = rng.randrange(5)
    k = rng.randrange(n)
    if odd == 1:
        replies[k] = NoNodeError()
    elif odd == 2:
        paths[k] = rng.choice([zk_paths.topic("t"), "/a/b/c/d/e/f/state", "/x/state"])
    elif odd == 3:
        replies[k] = multi_read.Node(_state_bytes(rng) + b" ", 0, k)
    start = rng.randrange(3)
    paths = ["/pad"] * start + paths
    got: list[ZkNode | None] = [None] * len(paths)
    decode_nodes(fast, paths, start, replies, got)
    strict = ZnodeDecoder()
    want = [None] * start + [
        ZkNode(strict(p, r.data), r.version, r.czxid) if isinstance(r, multi_read.Node) else None
        for p, r in zip(paths[start:], replies, strict=True)]
    assert got == want
    assert all(type(node) is ZkNode for node in got if node is not None)
