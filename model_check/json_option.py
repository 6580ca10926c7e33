"""``--json FILE``: the one machine-readable output option of every kcontrol command that has
one (``check``, ``audit``, ``chaos``, ``zookeeper status``).

The report goes to FILE as indented JSON. ``--json -``, or ``--json`` with no value (the older
flag form), writes it to standard output instead, and the command's human-readable output then
goes to standard error (or is left out where the JSON replaces it), so standard output is JSON
only. It lives in ``model_check`` because the checker may import no adapter, while the command
line may import the checker.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

STDOUT = Path("-")

HELP = ("Write the {what} as JSON to FILE. With - (or --json alone), write it to standard "
        "output, and the human-readable output to standard error.")


def json_option(what: str) -> Callable[[F], F]:
    """Adds ``--json [FILE]`` as the parameter ``json_out`` (a ``Path``; ``STDOUT`` for ``-`` or
    no value; None when not given)."""
    return click.option(
        "--json",
        "json_out",
        type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
        is_flag=False,
        flag_value="-",
        default=None,
        metavar="FILE",
        help=HELP.format(what=what),
    )


def to_stdout(json_out: Path | None) -> bool:
    return json_out == STDOUT


def write_json(json_out: Path, obj: Any) -> None:
    """``obj`` as indented JSON to standard output (``STDOUT``) or to the file, replaced whole
    (written beside it, then renamed)."""
    text = json.dumps(obj, indent=2) + "\n"
    if to_stdout(json_out):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    tmp = json_out.with_name(json_out.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, json_out)
