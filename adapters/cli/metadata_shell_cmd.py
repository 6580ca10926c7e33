"""``kcontrol metadata-shell``: Kafka's ``kafka-metadata-shell.sh`` -- the metadata image as a
tree of directories and files (``adapters/metadata_tools``), read from a snapshot file, a
node's metadata log directory, or a live quorum, browsed with ls, cd, cat, tree, find.

Trailing arguments are one command, run and exited from (``kcontrol metadata-shell --snapshot
F cat /image/topics/byName/bar/0``); with none, commands come from the terminal (a prompt,
history, Tab completion) or, when standard input is not a terminal, one a line from it. Exit
status: 0; 1 when the image cannot be read or a command failed (a path that is not there);
2 for bad arguments."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from adapters.metadata_tools.image_source import (
    Loaded,
    SourceError,
    load_directory,
    load_snapshot,
)
from adapters.metadata_tools.repl import run_interactive, run_piped
from adapters.metadata_tools.shell_commands import ShellState, run_words
from adapters.metadata_tools.shell_tree import build_tree

DEFAULT_MAX_BYTES = 256 << 20


def _version() -> str:
    try:
        return version("kcontrol")
    except PackageNotFoundError:
        return "unknown"


def _load(snapshot: Path | None, directory: Path | None, bootstrap: str | None,
          timeout: float, max_bytes: int) -> Loaded:
    if snapshot is not None:
        return load_snapshot(snapshot)
    if directory is not None:
        return load_directory(directory)
    assert bootstrap is not None
    from adapters.metadata_tools.quorum_reader import load_quorum

    return load_quorum(bootstrap, timeout=timeout, max_bytes=max_bytes)


@click.command("metadata-shell", short_help="Browse the metadata image as a tree.",
               context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1)
@click.option("--snapshot", "-s", type=click.Path(dir_okay=False, path_type=Path),
              help="Read the image from this snapshot file (<end offset>-<epoch>.checkpoint).")
@click.option("--directory", "-d", type=click.Path(file_okay=False, path_type=Path),
              help="Read the image from a node's metadata log directory (metadata.log.dir or "
                   "its __cluster_metadata-0): the latest snapshot, then every whole batch "
                   "after it. The high watermark is not on disk, so records not yet committed "
                   "are replayed too; a torn tail of the last segment is left out, and said.")
@click.option("--bootstrap-controller", "bootstrap", metavar="HOST:PORT[,...]",
              help="Read the committed image from a live quorum: Fetch from offset 0 as an "
                   "observer without a replica id, up to the high watermark, following the "
                   "leader (its address given as ID@HOST:PORT, or learnt from the controller asked), "
                   "and "
                   "FetchSnapshot when the leader answers with a snapshot.")
@click.option("--timeout", type=click.FloatRange(min=0.1, max=600), default=10.0,
              show_default=True,
              help="With --bootstrap-controller: seconds for each request, and the whole read "
                   "is bounded by twenty times that.")
@click.option("--max-bytes", type=click.IntRange(min=1 << 16), default=DEFAULT_MAX_BYTES,
              show_default=True,
              help="With --bootstrap-controller: the most bytes of records and snapshot to "
                   "read before giving up.")
def metadata_shell(command: tuple[str, ...], snapshot: Path | None, directory: Path | None,
                   bootstrap: str | None, timeout: float, max_bytes: int) -> None:
    """Kafka's metadata shell: the image under /image (provenance, features, cluster/brokers,
    topics/byName and byId, configs, clientQuotas, acls, scram, delegationToken), browsed
    with ls, cd, cat, tree, find, pwd, history, help and exit. Give exactly one of
    --snapshot, --directory and --bootstrap-controller; COMMAND runs one command and exits."""
    given = [name for name, v in (("--snapshot", snapshot), ("--directory", directory),
                                  ("--bootstrap-controller", bootstrap)) if v is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --snapshot FILE, --directory DIR and "
                               f"--bootstrap-controller HOST:PORT (got {len(given)}: "
                               f"{', '.join(given) or 'none'})")
    try:
        loaded = _load(snapshot, directory, bootstrap, timeout, max_bytes)
    except SourceError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if loaded.note:
        click.echo(f"note: {loaded.note}", err=True)
    state = ShellState(build_tree(loaded.image, loaded.provenance, source=loaded.source,
                                  version=_version()))
    if command:
        out = run_words(state, list(command))
        for line in out.lines:
            click.echo(line)
        sys.exit(1 if out.failed else 0)
    if sys.stdin.isatty():
        run_interactive(state, sys.stdout)
        return
    if not run_piped(state, sys.stdin, sys.stdout):
        sys.exit(1)
