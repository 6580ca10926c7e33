"""The memos' codec (``model_check.memo.codec``) answers as the plain one does, remembering
both directions by identity, across a turnover of its generations."""

from __future__ import annotations

import pytest

from fsm.values import LeaderAndIsr, TopicAssignment
from model_check.memo import codec as memo_codec
from model_check.memo.codec import CodecMemo
from model_check.world.codec import PLAIN


def _values() -> list[object]:
    return [LeaderAndIsr(b, 3, (b, b + 1), 2) for b in range(20)] + [
        TopicAssignment(((0, (1, 2)), (1, (2, 3)))), frozenset({3, 1, 2}), (1, "x", None)]


def test_the_memos_codec_answers_as_the_plain_one() -> None:
    memo = CodecMemo()
    for v in _values():
        enc = memo.encode(v)
        assert enc == PLAIN.encode(v) and memo.encode(v) is enc  # remembered
        assert memo.decode(enc) is v  # the very value it was encoded from
        assert PLAIN.decode(enc) == v
    pairs = tuple((PLAIN.encode(k), PLAIN.encode(v)) for k, v in [(1, _values()[0])])
    assert memo.decoded_dict(pairs) == PLAIN.decoded_dict(pairs)
    assert memo.decoded_dict(pairs) is memo.decoded_dict(pairs)


def test_what_is_in_use_survives_a_turnover(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo_codec, "LIMIT", 8)
    memo = CodecMemo()
    kept = _values()[0]
    enc = memo.encode(kept)
    for v in _values()[1:]:
        memo.encode(v)
        assert memo.encode(kept) is enc  # found again, young or old: moved back
    assert len(memo.enc) <= 8
