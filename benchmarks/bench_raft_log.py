"""The metadata log's libraries, measured before choosing (issue 24), and the fsync floor.

1. Record batch v2, encode and decode, batches of 1, 10, 100, 1000 records (each value a
   framed ``PartitionChangeRecord``, ~40 bytes): ours (``adapters.raft_log.batch_format``:
   struct + the C ``crc32c``), kafka-python's ``kafka.record`` (``DefaultRecordBatchBuilder``
   / ``DefaultRecordBatch``), kio 0.5's ``kio.records`` (``write_new_batch`` /
   ``read_batch``). Every library's bytes are first checked equal to ours. Inputs are built
   before timing, in each library's own form; decode includes the CRC check and every
   record's key and value.
2. CRC-32C of 100 B, 4 KiB and 1 MiB: the C ``crc32c`` package, ``google-crc32c`` (if
   importable: ``--extra-path`` adds a directory to ``sys.path``), a pure-Python table
   (written here) and kafka-python's pure-Python one.
3. The fsync floor: one batch written and fsynced at a time to one local file, records per
   second by batch size -- what no replication over this disk can beat.
   :func:`floor_records_per_second` is importable by other benchmarks. Also the same through
   ``MetadataLog.append`` + ``flush`` (bytes serde and the metadata record serde).

CPU rates use ``time.process_time`` (best of ``--repeat``); the fsync figures wall time. A
fixed calibration (``sum(i*i for i in range(10**6))``, best of 5) is printed before and after.

    .venv/bin/python benchmarks/bench_raft_log.py [--repeat 5] [--fsyncs 200] [--dir DIR]
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import statistics
import struct
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.raft_log import BYTES, METADATA, MetadataLog  # noqa: E402
from adapters.raft_log.batch_format import (  # noqa: E402
    crc_matches,
    decode_records,
    encode_batch,
    read_header,
)
from fsm.kraft.records import encode_record  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import PartitionChangeRecord  # noqa: E402
from fsm.raft.messages import Batch  # noqa: E402

BATCH_SIZES = (1, 10, 100, 1000)
TIMESTAMP_MS = 1_700_000_000_000  # whole seconds: kio keeps no milliseconds


def calibration() -> float:
    """Seconds for ``sum(i*i for i in range(10**6))``, best of 5."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def metadata_records(n: int) -> list[PartitionChangeRecord]:
    return [PartitionChangeRecord(i % 100, uuid_of(i // 100), isr=(i % 7 + 1, i % 7 + 2),
                                  leader=i % 7 + 1) for i in range(n)]


def record_values(n: int) -> list[bytes]:
    return [encode_record(r) for r in metadata_records(n)]


def best_cpu(fn: Callable[[], object], repeat: int, loops: int) -> float:
    """CPU seconds of one call of ``fn``, best of ``repeat`` runs of ``loops`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(loops):
            fn()
        best = min(best, (time.process_time() - start) / loops)
    return best


# -- the three codecs ---------------------------------------------------------------------
def ours_encode(values: list[bytes]) -> Callable[[], bytes]:
    recs = [(None, v) for v in values]
    return lambda: encode_batch(0, 1, recs, timestamp_ms=TIMESTAMP_MS)


def ours_decode(raw: bytes) -> Callable[[], object]:
    def run() -> object:
        header = read_header(raw)
        assert crc_matches(raw, 0, header)
        return decode_records(raw, header)
    return run


def kafka_python_encode(values: list[bytes]) -> Callable[[], bytes]:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    def run() -> bytes:
        b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                      producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                      batch_size=1 << 30)
        for i, v in enumerate(values):
            b.append(i, timestamp=TIMESTAMP_MS, key=None, value=v, headers=[])
        raw = b.build()
        struct.pack_into(">i", raw, 12, 1)  # the leader epoch, outside the CRC
        return bytes(raw)
    return run


def kafka_python_decode(raw: bytes) -> Callable[[], object]:
    from kafka.record.default_records import DefaultRecordBatch

    def run() -> object:
        batch = DefaultRecordBatch(raw)
        assert batch.validate_crc()
        return [(r.key, r.value) for r in batch]
    return run


def kio_encode(values: list[bytes]) -> Callable[[], bytes]:
    from kio.records.schema import NewRecordBatch, Record
    from kio.records.writers import write_new_batch
    from kio.static.primitive import TZAwareMicros, i8, i16, i32, i64

    when = TZAwareMicros.parse(datetime.datetime.fromtimestamp(TIMESTAMP_MS / 1000,
                                                               datetime.UTC))
    new = NewRecordBatch(producer_id=i64(-1), producer_epoch=i16(-1), base_sequence=i32(-1),
                         partition_leader_epoch=i32(1), attributes=i16(0), records=tuple(
                             Record(attributes=i8(0), timestamp=when, offset=i64(i), key=None,
                                    value=v, headers=()) for i, v in enumerate(values)))

    def run() -> bytes:
        buf = io.BytesIO()
        write_new_batch(buf, new)
        return buf.getvalue()
    return run


def kio_decode(raw: bytes) -> Callable[[], object]:
    from kio.records.readers import read_batch
    return lambda: read_batch(raw, 0)


CODECS: dict[str, tuple[Callable[[list[bytes]], Callable[[], bytes]],
                        Callable[[bytes], Callable[[], object]]]] = {
    "ours (struct + crc32c)": (ours_encode, ours_decode),
    "kafka-python kafka.record": (kafka_python_encode, kafka_python_decode),
    "kio 0.5 kio.records": (kio_encode, kio_decode),
}


def codec_table(repeat: int) -> None:
    print("\n## record batch v2: records per CPU second (us per batch)")
    print(f"{'library':<27}" + "".join(f" {'enc ' + str(n):>18}" for n in BATCH_SIZES)
          + "".join(f" {'dec ' + str(n):>18}" for n in BATCH_SIZES))
    inputs = {n: record_values(n) for n in BATCH_SIZES}
    reference = {n: ours_encode(inputs[n])() for n in BATCH_SIZES}
    for name, (enc, dec) in CODECS.items():
        cells = []
        for n in BATCH_SIZES:
            run = enc(inputs[n])
            assert run() == reference[n], f"{name} writes other bytes than ours ({n})"
            loops = max(1, 2000 // n)
            t = best_cpu(run, repeat, loops)
            cells.append(f"{n / t:>10,.0f} ({t * 1e6:>5,.0f})")
        for n in BATCH_SIZES:
            run = dec(reference[n])
            loops = max(1, 2000 // n)
            t = best_cpu(run, repeat, loops)
            cells.append(f"{n / t:>10,.0f} ({t * 1e6:>5,.0f})")
        print(f"{name:<27} " + " ".join(cells))
    print(f"(batch bytes: {', '.join(f'{n}: {len(reference[n]):,}' for n in BATCH_SIZES)})")


# -- CRC-32C ------------------------------------------------------------------------------
def _table() -> list[int]:
    poly = 0x82F63B78  # Castagnoli, reflected
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        out.append(c)
    return out


_TABLE = _table()


def crc32c_pure(data: bytes) -> int:
    """CRC-32C a byte at a time from a 256-entry table: the baseline a C library beats."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc_implementations() -> dict[str, Callable[[bytes], int]]:
    import crc32c
    from kafka.record._crc32c import crc as kafka_python_crc

    found: dict[str, Callable[[bytes], int]] = {"crc32c (C, ICRAR)": crc32c.crc32c}
    try:
        import google_crc32c  # type: ignore[import-not-found]
        found[f"google-crc32c ({google_crc32c.implementation})"] = google_crc32c.value
    except ImportError:
        pass
    found["pure Python table (ours)"] = crc32c_pure
    found["kafka-python pure Python"] = kafka_python_crc
    return found


def crc_table(repeat: int) -> None:
    print("\n## CRC-32C: MB per CPU second")
    sizes = (100, 4096, 1 << 20)
    data = {n: bytes((i * 131 + 7) & 0xFF for i in range(n)) for n in sizes}
    print(f"{'implementation':<32}" + "".join(f" {str(n) + ' B':>12}" for n in sizes))
    for name, fn in crc_implementations().items():
        assert fn(b"123456789") == 0xE3069283, name  # the check value of CRC-32C
        cells = []
        for n in sizes:
            if "ython" in name and n > 4096:
                loops, rep = 1, 1  # seconds per MiB: once is enough
            else:
                loops, rep = max(1, (1 << 22) // n), repeat
            t = best_cpu(lambda fn=fn, d=data[n]: fn(d), rep, loops)
            cells.append(f"{n / t / 1e6:>12,.1f}")
        print(f"{name:<32} " + " ".join(cells))


# -- the fsync floor ------------------------------------------------------------------------
def floor_records_per_second(batch_sizes: Iterable[int] = BATCH_SIZES, *,
                             directory: str | os.PathLike[str] | None = None,
                             fsyncs: int = 200, rounds: int = 3,
                             values: Callable[[int], list[bytes]] = record_values
                             ) -> dict[int, float]:
    """Records per second when every batch of ``n`` records (for each ``n`` of
    ``batch_sizes``) is written to one local file and fsynced before the next: the floor of
    any replication that makes each batch durable. ``fsyncs`` batches per size and round,
    wall time, the median of ``rounds`` rounds (the sizes interleaved, so a burst of load
    from elsewhere hits them alike); the files are made in ``directory`` (a temporary
    directory if None) and removed."""
    sizes = list(batch_sizes)
    encoded = {n: encode_batch(0, 1, [(None, v) for v in values(n)],
                               timestamp_ms=TIMESTAMP_MS) for n in sizes}
    seen: dict[int, list[float]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        for _ in range(rounds):
            for n in sizes:
                raw = encoded[n]
                path = os.path.join(tmp, f"floor-{n}.log")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    os.write(fd, raw)
                    os.fsync(fd)  # the file exists and has a first block before timing
                    start = time.perf_counter()
                    for _ in range(fsyncs):
                        os.write(fd, raw)
                        os.fsync(fd)
                    elapsed = time.perf_counter() - start
                finally:
                    os.close(fd)
                    os.unlink(path)
                seen[n].append(n * fsyncs / elapsed)
    return {n: statistics.median(r) for n, r in seen.items()}


def log_records_per_second(batch_sizes: Iterable[int], *, directory: str | None,
                           fsyncs: int, metadata: bool, rounds: int = 3) -> dict[int, float]:
    """The same as the floor through ``MetadataLog.append`` + ``flush``, encoding included
    (the metadata record serde encodes the records too); the median of ``rounds``."""
    sizes = list(batch_sizes)
    seen: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(rounds):
        for n in sizes:
            with tempfile.TemporaryDirectory(dir=directory) as tmp:
                records: list[Any] = metadata_records(n) if metadata else record_values(n)
                with MetadataLog.open(tmp, serde=METADATA if metadata else BYTES) as log:
                    log.append([Batch(0, 1, tuple(records))])
                    log.flush()
                    start = time.perf_counter()
                    for _ in range(fsyncs):
                        log.append([Batch(log.end_offset, 1, tuple(records))])
                        log.flush()
                    elapsed = time.perf_counter() - start
                seen[n].append(n * fsyncs / elapsed)
    return {n: statistics.median(r) for n, r in seen.items()}


def fsync_table(fsyncs: int, directory: str | None) -> None:
    where = directory or tempfile.gettempdir()
    print(f"\n## fsync floor: records per second, {fsyncs} fsynced batches per size and round, "
          f"median of 3 rounds, in {where}")
    floor = floor_records_per_second(BATCH_SIZES, directory=directory, fsyncs=fsyncs)
    through = log_records_per_second(BATCH_SIZES, directory=directory, fsyncs=fsyncs,
                                     metadata=False)
    typed = log_records_per_second(BATCH_SIZES, directory=directory, fsyncs=fsyncs,
                                   metadata=True)
    print(f"{'batch records':>13} {'write+fsync':>14} {'fsyncs/s':>9} {'MetadataLog bytes':>18}"
          f" {'MetadataLog records':>20}")
    for n in BATCH_SIZES:
        print(f"{n:>13} {floor[n]:>14,.0f} {floor[n] / n:>9,.0f} {through[n]:>18,.0f} "
              f"{typed[n]:>20,.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fsyncs", type=int, default=200, help="fsynced batches per size")
    ap.add_argument("--dir", default=None, help="where the fsync floor's file goes")
    ap.add_argument("--extra-path", default=None,
                    help="a directory added to sys.path (e.g. google-crc32c installed with "
                         "pip --target)")
    args = ap.parse_args(argv)
    if args.extra_path:
        sys.path.append(args.extra_path)
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    codec_table(args.repeat)
    crc_table(args.repeat)
    fsync_table(args.fsyncs, args.dir)
    cal1 = calibration()
    print(f"\n# calibration after: {cal1:.3f} s; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
