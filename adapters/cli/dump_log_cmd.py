"""``kcontrol dump-log --cluster-metadata-decoder FILE...``: Kafka's ``kafka-dump-log.sh`` over
the segments (``.log``) and snapshots (``.checkpoint``) of ``__cluster_metadata-0``. The lines
are ``adapters.metadata_tools.dump_format``'s; this module reads the files and prints.

Exit status 0 when every file decodes to its end; 1 when one does not (what decoded is
printed, then one ``error:`` line on stderr naming the file and the byte position; the other
files are still dumped); 2 for bad arguments (a missing file, a name that is neither a segment
nor a snapshot)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

import click

from adapters.metadata_tools.dump_format import (
    DumpError,
    FileKind,
    dump_lines,
    file_kind,
    json_lines,
)
from model_check.json_option import json_option, to_stdout


def _files(paths: tuple[str, ...], files_opt: str | None) -> list[tuple[Path, FileKind]]:
    names = list(paths) + [p for p in (files_opt or "").split(",") if p.strip()]
    if not names:
        raise click.UsageError("no file to dump: give FILE... (or --files a,b)")
    out = []
    for name in names:
        path = Path(name.strip())
        if not path.is_file():
            raise click.BadParameter(f"{name}: no such file", param_hint="FILE")
        try:
            out.append((path, file_kind(path.name)))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="FILE") from None
    return out


def _is_log_file(path: Path) -> bool:
    try:
        file_kind(path.name)
    except ValueError:
        return False
    return True


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


@click.command("dump-log", short_help="Print metadata log segments and snapshots.")
@click.argument("paths", metavar="FILE...", nargs=-1)
@click.option("--files", "files_opt", metavar="F1,F2",
              help="Kafka's form: a comma-separated list of files (added to FILE...).")
@click.option("--cluster-metadata-decoder", "decode", is_flag=True,
              help="Decode the records as KRaft metadata records (Kafka's flag): a line per "
                   "record with its JSON payload. Without it, only the batches are listed.")
@click.option("--skip-record-metadata", is_flag=True,
              help="Print a record's payload without its offset, timestamp and sizes.")
@json_option("records, one JSON object per line (file, offset, batch, epoch, control, type, "
             "version, data), in place of Kafka's lines,")
def dump_log(paths: tuple[str, ...], files_opt: str | None, decode: bool,
             skip_record_metadata: bool, json_out: Path | None) -> None:
    """Dump FILE... -- segments (<base offset>.log) and snapshots (<end offset>-<epoch>
    .checkpoint) of a node's __cluster_metadata-0 directory -- in the shape of Kafka's
    DumpLogSegments. A torn or corrupt file prints what decodes, then an error naming the
    file and the byte position, and the exit status is 1."""
    if json_out is not None and not to_stdout(json_out) and _is_log_file(json_out):
        raise click.BadParameter(f"{json_out} is a metadata log file: the JSON would replace it "
                                 "(give --json - or --json FILE after the files)",
                                 param_hint="--json")
    files = _files(paths, files_opt)
    as_json = json_out is not None
    if json_out is None or to_stdout(json_out):
        _dump(files, sys.stdout, as_json, decode, skip_record_metadata)
    else:
        with json_out.open("w") as f:
            _dump(files, f, as_json, decode, skip_record_metadata)


def _dump(files: list[tuple[Path, FileKind]], out: TextIO, as_json: bool, decode: bool,
          skip_record_metadata: bool) -> None:
    failed = False
    for path, kind in files:
        if not as_json:
            out.write(f"Dumping {path}\n")
        try:
            data = path.read_bytes()  # not mapped: a live node may truncate its last segment
            lines = (json_lines(data, kind, str(path)) if as_json else
                     dump_lines(data, kind, deep=decode,
                                skip_record_metadata=skip_record_metadata))
            for line in lines:
                out.write(line + "\n")
        except BrokenPipeError:  # the reader went away (``| head``): stop quietly
            _silence_stdout()
            sys.exit(1)
        except DumpError as exc:
            out.flush()
            click.echo(f"error: {path}: {exc}", err=True)
            failed = True
        except OSError as exc:
            out.flush()
            click.echo(f"error: {path}: {exc.strerror or exc}", err=True)
            failed = True
    try:
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(1)
    if failed:
        sys.exit(1)
