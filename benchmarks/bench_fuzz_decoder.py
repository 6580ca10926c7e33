"""Fuzz the Kafka wire decoder the way a listener uses it (``adapters.network.wire_fuzz``).

Every input is fed to ``wire_fuzz.classify`` with the API ranges of one of the three kinds of
listener in turn (every API; the control plane's; the data plane's behind a control plane).
The contract: each input is decoded, or answered, or refused with one of the codec's own
errors; any other exception is a crash. Every ``--memory-every``-th input is run again
under tracemalloc and its peak must stay within ``wire_fuzz.memory_bound`` (256 KiB plus
512 bytes per input byte): no length field may make the decoder allocate what the bytes
cannot back.

Engines:

- ``seeded`` (default): valid frames of every API and version, mutated structure-aware
  (lengths, counts, varints, header key/version, size prefix, bit flips, truncation,
  splices) plus random bytes; input ``i`` is a function of ``--seed`` and ``i`` alone, so
  a crash is replayed with ``--replay I``;
- ``atheris``: coverage-guided (libFuzzer) over the instrumented codec, started from the
  same valid frames, mutating with libFuzzer's mutators and the structure-aware ones
  (needs ``pip install atheris``; ``.[fuzz]``).

Prints a table (inputs, decoded, answered, refused by error kind, crashes, inputs/s, memory,
load average) and exits 1 on any crash or memory overrun.

    .venv/bin/python benchmarks/bench_fuzz_decoder.py --inputs 1000000 [--seed S]
    .venv/bin/python benchmarks/bench_fuzz_decoder.py --engine atheris --inputs 200000
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHOWN_CRASHES = 5
RATIO_MIN_BYTES = 256


def planes() -> list[dict[int, tuple[int, int]]]:
    """The API ranges of the three kinds of listener: every API (no control plane), the
    control plane's, the data plane's beside a control plane. Imported late: the atheris
    engine must instrument the codec before anything imports it."""
    from adapters.network.codec.registry import SUPPORTED
    from adapters.network.server import CONTROL_PLANE_APIS, DATA_PLANE_APIS

    return [dict(SUPPORTED),
            {k: r for k, r in SUPPORTED.items() if k in CONTROL_PLANE_APIS},
            {k: r for k, r in SUPPORTED.items() if k in DATA_PLANE_APIS}]


class Tally:
    def __init__(self, memory_every: int) -> None:
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.crashes: list[tuple[int, bytes, str]] = []
        self.crash_count = 0
        self.memory_every = memory_every
        self.memory_samples = 0
        self.worst_peak = 0
        self.worst_ratio = 0.0
        self.memory_overruns: list[tuple[int, int, int]] = []
        self.inputs = 0
        self.planes = planes()

    def run(self, F: Any, i: int, data: bytes) -> None:
        self.inputs += 1
        supported = self.planes[i % len(self.planes)]
        try:
            self.outcomes[F.classify(data, supported)] += 1
        except Exception:  # noqa: BLE001 -- a crash: counted and shown, the run goes on
            self.crash_count += 1
            if len(self.crashes) < SHOWN_CRASHES:
                self.crashes.append((i, data, traceback.format_exc()))
            return
        if self.memory_every and i % self.memory_every == 0:
            peak = F.traced_peak(data)
            self.memory_samples += 1
            self.worst_peak = max(self.worst_peak, peak)
            if len(data) >= RATIO_MIN_BYTES:  # below, the fixed overhead dominates
                self.worst_ratio = max(self.worst_ratio, peak / len(data))
            if peak > F.memory_bound(data):
                self.memory_overruns.append((i, len(data), peak))

    @property
    def failed(self) -> bool:
        return bool(self.crash_count or self.memory_overruns)


def report(tally: Tally, engine: str, seed: int, seconds: float, load: tuple[float, ...],
           json_path: Path | None) -> None:
    rate = tally.inputs / seconds if seconds else 0.0
    rows: list[tuple[str, str]] = [("engine", engine), ("seed", str(seed)),
                                   ("inputs", f"{tally.inputs:,}")]
    decoded = tally.outcomes.get("decoded", 0)
    rows.append(("decoded ok", f"{decoded:,}"))
    for label, n in sorted(tally.outcomes.items(), key=lambda kv: -kv[1]):
        if label.startswith("answered"):
            rows.append((f"answered ({label.split()[1]}, connection kept)", f"{n:,}"))
    rows.append(("incomplete (waits for more bytes)", f"{tally.outcomes.get('incomplete', 0):,}"))
    refused = {k: v for k, v in tally.outcomes.items()
               if k not in ("decoded", "incomplete") and not k.startswith("answered")}
    for label, n in sorted(refused.items(), key=lambda kv: -kv[1]):
        kind = label.split()[1] if label.startswith("closed") else label
        rows.append((f"rejected: {kind}" + (" (closed)" if label.startswith("closed") else ""),
                     f"{n:,}"))
    rows += [
        ("crashes (unexpected exceptions)", f"{tally.crash_count:,}"),
        ("memory samples (tracemalloc)", f"{tally.memory_samples:,}"),
        (f"worst peak / bytes per input byte (inputs >= {RATIO_MIN_BYTES} B)",
         f"{tally.worst_peak:,} B / {tally.worst_ratio:.1f}"),
        ("memory overruns", f"{len(tally.memory_overruns):,}"),
        ("max RSS", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"),
        ("seconds", f"{seconds:.1f}"),
        ("inputs/s", f"{rate:,.0f}"),
        ("load average before -> after", f"{load[0]:.2f} -> {os.getloadavg()[0]:.2f} "
                                          f"({os.cpu_count()} cores)"),
        ("python", platform.python_version()),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"{'':-<{width + 16}}")
    for k, v in rows:
        print(f"{k:<{width}}  {v:>14}")
    print(f"{'':-<{width + 16}}")
    for i, data, tb in tally.crashes:
        print(f"\nCRASH at input {i} ({len(data)} bytes): {data[:96].hex()}"
              f"{'...' if len(data) > 96 else ''}\n{tb}", file=sys.stderr)
    for i, n, peak in tally.memory_overruns[:SHOWN_CRASHES]:
        print(f"MEMORY at input {i}: {peak:,} B peak for {n} input bytes", file=sys.stderr)
    if json_path is not None:
        json_path.write_text(json.dumps({
            "engine": engine, "seed": seed, "inputs": tally.inputs, "decoded": decoded,
            "outcomes": dict(tally.outcomes), "crashes": tally.crash_count,
            "memory_overruns": len(tally.memory_overruns), "worst_peak_bytes": tally.worst_peak,
            "inputs_per_s": round(rate), "seconds": round(seconds, 2),
            "load_before": load[0], "cores": os.cpu_count(),
        }, indent=2) + "\n")


def run_seeded(args: argparse.Namespace) -> int:
    from adapters.network import wire_fuzz as F

    tally = Tally(args.memory_every)
    load = os.getloadavg()
    t0 = time.perf_counter()
    for i, data in F.inputs(args.seed, args.inputs):
        tally.run(F, i, data)
    seconds = time.perf_counter() - t0
    report(tally, "seeded", args.seed, seconds, load, args.json)
    return 1 if tally.failed else 0


def run_atheris(args: argparse.Namespace) -> int:
    try:
        import atheris  # type: ignore[import-not-found]
    except ImportError:
        print("atheris is not installed (pip install atheris, or .[fuzz]); use --engine seeded",
              file=sys.stderr)
        return 2
    with atheris.instrument_imports(include=["adapters.network.codec"]):
        from adapters.network import wire_fuzz as F
    seeds = F.corpus(args.seed)
    corpus_dir = Path(tempfile.mkdtemp(prefix="kcontrol-fuzz-corpus-"))
    for n, s in enumerate(seeds):
        (corpus_dir / f"seed-{n:04d}").write_bytes(s.frame)
    tally = Tally(args.memory_every)
    load = os.getloadavg()
    t0 = time.perf_counter()
    total = args.inputs

    def one(data: bytes) -> None:
        tally.run(F, tally.inputs, data)
        if tally.inputs == total or (tally.crash_count and not args.keep_going):
            report(tally, "atheris", args.seed, time.perf_counter() - t0, load, args.json)
            sys.stdout.flush()
            os._exit(1 if tally.failed else 0)  # libFuzzer never returns

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if rng.random() < 0.5:
            return atheris.Mutate(data, max_size)
        try:
            base = F.Seed(0, 0, data, F.field_slots(data))
        except Exception:  # noqa: BLE001 -- not a valid frame: start from a seed frame
            base = seeds[rng.randrange(len(seeds))]
        return F.mutate(base, rng, other=seeds[rng.randrange(len(seeds))])[:max_size]

    argv = [sys.argv[0], f"-runs={total + len(seeds) + 10}", f"-seed={args.seed or 1}",
            "-max_len=4096", f"-artifact_prefix={corpus_dir}/", str(corpus_dir)]
    atheris.Setup(argv, one, custom_mutator=mutator)
    atheris.Fuzz()
    return 0  # not reached


def replay(args: argparse.Namespace) -> int:
    from adapters.network import wire_fuzz as F

    data = F.input_at(args.seed, args.replay)
    plane = planes()
    supported = plane[args.replay % len(plane)]
    print(f"input {args.replay} of seed {args.seed}: {data.hex()}")
    print(F.classify(data, supported))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", choices=("seeded", "atheris"), default="seeded")
    ap.add_argument("--memory-every", type=int, default=1000,
                    help="trace the memory of every N-th input (0: never)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--replay", type=int, default=None, help="re-run one seeded input")
    ap.add_argument("--keep-going", action="store_true",
                    help="atheris: count crashes instead of stopping at the first")
    args = ap.parse_args()
    if args.replay is not None:
        return replay(args)
    return run_atheris(args) if args.engine == "atheris" else run_seeded(args)


if __name__ == "__main__":
    sys.exit(main())
