"""A stand-in record-batch codec for the quorum codec's tests (a helper, not a test): batches
as ``repr`` text, read back with ``ast.literal_eval``, so records may be any literal (the
core's tests use strings and ints). Kafka's record batch v2 is ``adapters.raft_log``'s
(``wire_records``), which ``test_raftwire_with_raft_log.py`` runs the codec and the transport
with; the codec only needs a pair of callables that round-trip."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from fsm.raft.messages import Batch, LeaderChange


def encode_batches(batches: Sequence[Batch]) -> bytes:
    return repr([(b.base_offset, b.epoch, b.control,
                  [(r.leader_id, r.voters, r.granting_voters) if b.control else r
                   for r in b.records]) for b in batches]).encode()


def decode_batches(data: bytes) -> tuple[Batch, ...]:
    try:
        raw = ast.literal_eval(data.decode())
        return tuple(
            Batch(base, epoch,
                  tuple(LeaderChange(*r) if control else r for r in records), control)
            for base, epoch, control, records in raw
        )
    except (ValueError, SyntaxError, TypeError, UnicodeDecodeError, MemoryError,
            RecursionError) as e:
        raise DecodeError(f"not a stub record batch: {e}") from None


STUB_RECORDS = RecordsCodec(encode_batches, decode_batches)


def converter(cluster_id: str | None = "kcontrol-test-cluster") -> RaftConverter:
    return RaftConverter(STUB_RECORDS, cluster_id)
