"""The metadata shell's loop, thin: lines from a terminal (``readline``: history, tab
completion from ``shell_commands.completions``) or from a pipe, each run by
``shell_commands.run_line`` and its lines printed. Nothing here knows a command."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import TextIO

from adapters.metadata_tools.shell_commands import ShellState, completions, run_line

PROMPT = ">> "
BANNER = ("Welcome to the kcontrol metadata shell (Kafka's kafka-metadata-shell.sh). "
          "Type help for the commands; Tab completes commands and paths.")


def make_completer(state: ShellState, line_buffer: Callable[[], str],
                   cursor: Callable[[], int]) -> Callable[[str, int], str | None]:
    """A ``readline`` completer: the ``n``-th candidate for the word ending at the cursor
    (the whole line is read through ``line_buffer`` and ``cursor``, so the word may hold
    slashes)."""
    cache: dict[str, list[str]] = {}

    def complete(text: str, n: int) -> str | None:
        buffer = line_buffer()[:cursor()]
        if n == 0 or buffer not in cache:
            cache.clear()
            cache[buffer] = completions(state, buffer)
        found = cache[buffer]
        return found[n] if n < len(found) else None

    return complete


def run_piped(state: ShellState, stdin: TextIO, stdout: TextIO) -> bool:
    """Run every line of ``stdin`` until ``exit`` or its end; whether every one succeeded."""
    ok = True
    for line in stdin:
        out = run_line(state, line.rstrip("\n"))
        for text in out.lines:
            stdout.write(text + "\n")
        ok = ok and not out.failed
        if out.exit:
            break
    stdout.flush()
    return ok


def run_interactive(state: ShellState, stdout: TextIO) -> None:
    """Prompt, read, run, print until ``exit`` or the end of input (Ctrl-D); Ctrl-C drops
    the line being typed."""
    try:
        import readline
    except ImportError:  # no readline on this platform: no completion, still a shell
        readline = None  # type: ignore[assignment]
    if readline is not None:
        readline.set_completer(make_completer(state, readline.get_line_buffer,
                                              readline.get_endidx))
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
    stdout.write(BANNER + "\n")
    while True:
        try:
            line = input(PROMPT)
        except EOFError:
            stdout.write("\n")
            return
        except KeyboardInterrupt:
            stdout.write("^C (exit or Ctrl-D leaves)\n")
            continue
        out = run_line(state, line, width=shutil.get_terminal_size().columns)
        for text in out.lines:
            stdout.write(text + "\n")
        stdout.flush()
        if out.exit:
            return
