"""``kcontrol check`` and ``kcontrol replay``: the model checker's own command line.

The ``kcontrol`` command registers them (``adapters.cli``); ``model_check/spark/submit.py``
runs ``check`` as a spark-submit application. The checker imports no adapter: the command line
imports the checker, never the reverse.

The exhaustive search prints a table row per level; its ``rss MiB`` column is the current
resident set of this process (``model_check.memory``; with ``--engine spark`` the driver's,
not the executors'). ``--random`` shows its steps done of ``--steps`` with the rate and the
time left (``model_check.progress``: a bar when standard error is a terminal, else a plain line
at most every 10 s), on standard error only.

Exit codes: 0 pass, 1 violation (or a replay that reproduces it), 2 usage or scenario error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from model_check import checks as checks_mod
from model_check import counterexample as cx
from model_check import coverage as coverage_mod
from model_check import mutants
from model_check.graph import DEFAULT_LIMIT, GraphTooLarge, StateGraph
from model_check.json_option import json_option, to_stdout, write_json
from model_check.kraft import command as kraft_command
from model_check.kraft.mutants import KRAFT_MUTANTS
from model_check.kraft.scenario import KRaftScenarioError
from model_check.kraft.scenario import names as kraft_scenarios
from model_check.memory import rss_mib_text
from model_check.progress import Progress
from model_check.raft import command as raft_command
from model_check.raft.mutants import RAFT_MUTANTS
from model_check.raft.scenario import RaftScenarioError
from model_check.raft.scenario import names as raft_scenarios
from model_check.scenario import ScenarioError, load
from model_check.search import Level, Options, Result, bfs
from model_check.spark import cli as spark_cli
from model_check.walk import walks

DEFAULT_TRACE_DIR = Path(".kcontrol") / "counterexamples"
ENGINES = ("local", "spark")


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


def _checks() -> checks_mod.Checks:
    try:
        return checks_mod.default_checks()
    except checks_mod.ChecksUnavailable as e:
        _fail(str(e))
        raise  # unreachable


def _list_mutants(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    for m in mutants.MUTANTS + KRAFT_MUTANTS + RAFT_MUTANTS:
        click.echo(m.line())
    ctx.exit(0)


def _nothing() -> None:
    pass


def check_command(outputs_complete: Callable[[], None] = _nothing) -> click.Command:
    """The ``check`` command. ``outputs_complete`` is called when a local search has printed
    its verdict and written every file, just before the exit: the ``kcontrol`` console
    script then ends the process without freeing the search's state object by object
    (``adapters.cli.fast_exit``). A Spark run keeps the normal exit (its hooks stop the JVM)."""

    @click.command(name="check", short_help="Model-check a scenario against the invariants.")
    @click.argument("scenario")
    @click.option("--list-mutants", is_flag=True, expose_value=False, is_eager=True,
                  callback=_list_mutants, help="List the historic-bug mutants and exit.")
    @click.option("--mutant", type=click.Choice(mutants.names()
                                                + [m.name for m in KRAFT_MUTANTS]
                                                + [m.name for m in RAFT_MUTANTS]),
                  help="Check the core with this historic bug put back (see --list-mutants).")
    @click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
                  help="Where the search runs (for spark, see --master and --partitions).")
    @click.option("--master", help=spark_cli.MASTER_HELP)
    @click.option("--partitions", type=click.IntRange(min=1), help=spark_cli.PARTITIONS_HELP)
    @click.option("--partition-by", type=click.Choice(["zookeeper", "key"]), default=None,
                  help=spark_cli.PARTITION_BY_HELP + " Default: zookeeper.")
    @click.option("--driver-limit", type=click.IntRange(min=0), default=None,
                  help=spark_cli.DRIVER_LIMIT_HELP)
    @json_option("check report")
    @click.option("--max-states", type=click.IntRange(min=1), help="Stop after N distinct states.")
    @click.option("--depth", type=click.IntRange(min=0),
                  help="The depth bound (BFS) or walk length (--random). Default: the scenario's.")
    @click.option("--trace-out", type=click.Path(file_okay=False, path_type=Path),
                  default=DEFAULT_TRACE_DIR, show_default=True,
                  help="The directory for counterexamples (.txt, Mermaid .md, .replay.json).")
    @click.option("--random", "random_", is_flag=True, help="Run seeded random walks instead of BFS.")
    @click.option("--steps", type=click.IntRange(min=1), default=10_000, show_default=True,
                  help="With --random, the total steps over all walks.")
    @click.option("--seed", type=int, default=0, show_default=True, help="With --random, the seed.")
    @click.option("--symmetry/--no-symmetry", default=None,
                  help="Reduce by broker-id symmetry. Default: the scenario's `symmetry`.")
    @click.option("--graph", "graph_out", type=click.Path(dir_okay=False, path_type=Path),
                  help="Keep the explored graph, check that every state can recover, and write "
                       "it as GraphML to FILE (small scenarios).")
    @click.option("--graph-limit", type=click.IntRange(min=1), default=DEFAULT_LIMIT,
                  show_default=True, help="With --graph, the most states kept before giving up.")
    @click.option("--coverage", "coverage_on", is_flag=True,
                  help="Report what the run reached: the transitions of every table (with "
                       "counts), the handlers, decision kinds and leader selectors, and how often "
                       "each invariant was evaluated and its premise held (console and --json).")
    def check(**options: Any) -> None:
        """Explore every interleaving of SCENARIO (a .toml path or a shipped name) and check
        the invariant catalogue on every state and step."""
        _check(outputs_complete, **options)

    return check


def _check(outputs_complete: Callable[[], None], scenario: str, mutant: str | None,
           engine: str, master: str | None, partitions: int | None, partition_by: str | None,
           driver_limit: int | None, json_out: Path | None, max_states: int | None,
           depth: int | None, trace_out: Path, random_: bool, steps: int, seed: int,
           symmetry: bool | None, graph_out: Path | None, graph_limit: int,
           coverage_on: bool) -> None:
    if engine != "spark" and (master or partitions or partition_by or driver_limit is not None):
        _fail("--master, --partitions, --partition-by and --driver-limit go with --engine spark")
    if engine == "spark" and random_:
        _fail("--random walks run in this process: drop --engine spark")
    if engine == "spark" and graph_out:
        _fail("--graph runs with --engine local")
    if random_ and graph_out:
        _fail("--graph goes with the exhaustive search, not --random")
    if kraft_command.is_kraft(scenario):
        _check_kraft(scenario, mutant, engine, json_out, max_states, depth, trace_out, random_,
                     steps, seed, symmetry, graph_out, coverage_on, master, partitions,
                     partition_by, driver_limit)
        return
    if raft_command.is_raft(scenario):
        _check_raft(scenario, mutant, engine, master, partitions, json_out, max_states, depth,
                    trace_out, random_, steps, seed, symmetry, graph_out, coverage_on)
        return
    if mutant and mutant.startswith("raft-"):
        _fail(f"{mutant} is a Raft mutant: check it on a Raft scenario "
              f"({', '.join(raft_scenarios())})")
    if mutant and mutant.startswith("kraft-"):
        _fail(f"{mutant} is a KRaft mutant: check it on a KRaft scenario "
              f"({', '.join(kraft_scenarios())})")
    if mutant:  # patched for the whole command (search, trace rebuild), undone at exit
        click.get_current_context().with_resource(mutants.patched(mutant))
    spark = None
    try:
        sc = load(scenario)
    except ScenarioError as e:
        _fail(f"{e}; KRaft scenarios: {', '.join(kraft_scenarios())}")
        return
    checks = _checks()
    console = Console(highlight=False, soft_wrap=True, stderr=to_stdout(json_out))
    mode = f"random walks: {steps} steps, seed {seed}" if random_ else "bfs"
    console.print(f"[bold]check[/] {sc.name} ({sc.source}) engine={engine} {mode} "
                  f"checks={checks.name}" + (f" mutant={mutant}" if mutant else ""))
    if (sc.symmetry if symmetry is None else symmetry) and not random_:
        console.print("symmetry: on (worlds that differ by a renaming of the brokers no admin "
                      "action names, or only in zxid and session numbers, count once)")
    graph = StateGraph(graph_limit) if graph_out else None
    cov = coverage_mod.Coverage() if coverage_on else None
    if random_:
        with Progress(f"{sc.name} --random", steps, "steps") as bar:
            result = walks(sc, checks, steps, seed, depth,
                           on_walk=lambda walk: bar.advance(walk.generated), coverage=cov)
    else:
        console.print(f"{'level':>5} {'frontier':>9} {'generated':>10} {'new':>9} "
                      f"{'dupes':>9} {'seconds':>8} {'rss MiB':>8}")
        with console.status("exploring ...") as status:
            def on_level(lv: Level) -> None:
                console.print(f"{lv.depth:>5} {lv.frontier:>9} {lv.generated:>10} "
                              f"{lv.new:>9} {lv.duplicates:>9} {lv.seconds:>8.2f} "
                              f"{rss_mib_text():>8}")
                status.update(f"exploring level {lv.depth + 1} ({lv.new} states) ...")
            if engine == "spark":
                try:
                    result, spark = spark_cli.run_spark(
                        sc, checks, Options(depth=depth, max_states=max_states,
                                            symmetry=symmetry), master, partitions, on_level,
                        mutant, partition_by or "zookeeper", driver_limit, cov)
                except spark_cli.SparkUnavailable as e:
                    _fail(str(e))
                    return
            else:
                try:
                    result = bfs(sc, checks, Options(depth=depth, max_states=max_states,
                                                     symmetry=symmetry), on_level, graph, cov)
                except GraphTooLarge as e:
                    _fail(str(e))
                    return
    trace, saved = None, None
    if result.violation is not None:
        v = result.violation
        trace = cx.rebuild(sc, v.setup, v.path, v.invariant, v.detail)
        saved = cx.save(trace, trace_out, engine, mutant)
    if spark is not None:
        console.print(spark_cli.describe(spark), markup=False)
    if graph is not None and graph_out is not None:
        graph.write_graphml(graph_out)
        stuck = sum(1 for fp in graph.order if not graph.g.nodes[fp]["recoverable"])
        console.print(f"graph: {len(graph.order)} states, {graph.g.number_of_edges()} steps, "
                      f"{stuck} cannot recover -> {graph_out}", markup=False)
    if result.coverage is not None:
        for line in coverage_mod.lines(result.coverage.report()):
            console.print(line, markup=False)
    elif dict(sc.world).get("unclean_leader_election"):
        console.print("note: unclean leader election is on, so at_most_one_committer is "
                      "waived; --coverage counts the states where it would have failed",
                      markup=False)
    _summary(console, result, trace, saved)
    if json_out is not None:
        from model_check.report import report

        extra = {"seed": seed, "steps": steps} if random_ else {}
        if mutant:
            extra["mutant"] = mutant
        if graph is not None:
            extra["graph"] = {"file": str(graph_out), "states": len(graph.order),
                              "steps": graph.g.number_of_edges()}
        if spark is not None:
            extra["spark"] = spark
        write_json(json_out, report(result, trace, saved, **extra))
    if engine == "local":
        outputs_complete()  # every output is written: no need to free the search's state
    sys.exit(1 if result.violation is not None else 0)


def _check_kraft(scenario: str, mutant: str | None, engine: str, json_out: Path | None,
                 max_states: int | None, depth: int | None, trace_out: Path, random_: bool,
                 steps: int, seed: int, symmetry: bool | None, graph_out: Path | None,
                 coverage_on: bool, master: str | None, partitions: int | None,
                 partition_by: str | None, driver_limit: int | None) -> None:
    if symmetry or graph_out:
        _fail("KRaft scenarios run without --symmetry and --graph")
    if partition_by or driver_limit is not None:
        _fail("KRaft scenarios on Spark place states by key and run every level as a Spark "
              "job: drop --partition-by and --driver-limit")
    if mutant and not mutant.startswith("kraft-"):
        _fail(f"{mutant} is a ZooKeeper-mode mutant; KRaft mutants: "
              f"{', '.join(m.name for m in KRAFT_MUTANTS)}")
    console = Console(highlight=False, soft_wrap=True, stderr=to_stdout(json_out))
    try:
        code = kraft_command.run(console, scenario, mutant, depth, max_states, random_, steps,
                                 seed, json_out, trace_out, coverage_on, engine, master,
                                 partitions)
    except (KRaftScenarioError, spark_cli.SparkUnavailable) as e:
        _fail(str(e))
        return
    sys.exit(code)


def _check_raft(scenario: str, mutant: str | None, engine: str, master: str | None,
                partitions: int | None, json_out: Path | None, max_states: int | None,
                depth: int | None, trace_out: Path, random_: bool, steps: int, seed: int,
                symmetry: bool | None, graph_out: Path | None, coverage_on: bool) -> None:
    if symmetry or graph_out:
        _fail("Raft scenarios run without --symmetry and --graph")
    if mutant and not mutant.startswith("raft-"):
        _fail(f"{mutant} is not a Raft mutant; Raft mutants: "
              f"{', '.join(m.name for m in RAFT_MUTANTS)}")
    console = Console(highlight=False, soft_wrap=True, stderr=to_stdout(json_out))
    try:
        if engine == "spark":
            code = raft_command.run_spark(console, scenario, mutant, depth, max_states, master,
                                          partitions, json_out, trace_out, coverage_on)
        else:
            code = raft_command.run(console, scenario, mutant, depth, max_states, random_,
                                    steps, seed, json_out, trace_out, coverage_on)
    except RaftScenarioError as e:
        _fail(str(e))
        return
    except spark_cli.SparkUnavailable as e:
        _fail(str(e))
        return
    sys.exit(code)


def _summary(console: Console, r: Result, trace: cx.Trace | None,
             saved: dict[str, Path] | None) -> None:
    console.print(f"states generated {r.states_generated}, distinct states "
                  f"{r.distinct_states}, depth {r.depth} ({r.bounded_by}), "
                  f"{r.seconds:.2f}s, {r.states_per_second:.0f} states/s")
    if trace is None:
        console.print("[bold green]verdict: pass[/]")
        return
    console.print(f"[bold red]verdict: violation[/] of {trace.invariant}: {trace.detail}")
    console.print(f"trace ({len(trace.steps)} steps, {len(trace.explored())} after the "
                  f"setup of {r.setup_steps}):")
    for line in trace.one_liners():
        if " setup " not in line[:10]:
            console.print("  " + line, markup=False)
    if saved:
        for kind, path in saved.items():
            console.print(f"  {kind}: {path}", markup=False)


@click.command(short_help="Replay a saved counterexample step by step.")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def replay(trace: Path) -> None:
    """Run a saved counterexample (TRACE, a .replay.json) step by step through a fresh
    world, re-checking the invariants; exit 1 when the violation reproduces."""
    try:
        doc = cx.load_replay(trace)
        checks = _checks()
        r = cx.replay(doc, checks, out=lambda line: click.echo(line))
    except (cx.ReplayError, ScenarioError) as e:
        _fail(str(e))
        return
    if r.found is None:
        click.echo(f"NOT REPRODUCED: {r.steps} steps ran, no invariant violated "
                   f"(expected {r.expected})")
        sys.exit(0)
    same = "REPRODUCED" if r.reproduced else f"DIFFERENT VIOLATION (expected {r.expected})"
    click.echo(f"{same}: {r.found.invariant} violated at step {r.steps}: {r.found.detail}")
    sys.exit(1)
