"""Progress of long work (random walks, chaos faults, rows of ``scripts/walk_all.py``): done of
total, the rate and the time left, on standard error only.

Three modes, chosen when the ``Progress`` is entered:

* ``bar`` -- standard error is a terminal (its ``isatty()``: ``FORCE_COLOR`` and
  ``TTY_COMPATIBLE``, which rich would follow and CI systems set, do not count) whose
  ``TERM`` is not ``dumb``: a ``rich.progress`` bar, redrawn ``REDRAW_PER_S`` times a second
  by rich's thread, which reads the count then (``advance`` only adds to it). It is removed
  when the work ends. While it shows, what ``print`` writes to standard error -- and to
  standard output when that is a terminal too (the same screen) -- is printed above it
  through standard error; standard output piped elsewhere is left alone. A rich ``Console``
  writes past that redirection: print through ``Progress.console`` instead.
* ``plain`` -- standard error is not a terminal (CI logs, pipes): no control characters, one
  line at most every ``PLAIN_EVERY_S`` seconds, the first one ``PLAIN_EVERY_S`` after the
  start (a short run prints none), each ``PLAIN_FORMAT``, e.g.
  ``progress: deep --random: 42000/100000 steps (42%), 3100 steps/s, elapsed 0:00:13, eta
  0:00:18``.
* ``off`` -- ``enabled=False``: nothing (for a ``--quiet``; no command using this has one).

The rate is the average since the start (done / elapsed), the same in the bar and the lines;
the time left is what remains at that rate (``?`` before anything is done). The progress
itself never goes to standard output, so ``--json -`` output stays JSON only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, Task, TextColumn
from rich.progress import Progress as RichProgress
from rich.table import Column
from rich.text import Text

REDRAW_PER_S = 4
"""The bar's redraws per second."""

PLAIN_EVERY_S = 10.0
"""Seconds between two plain lines, at least."""

PLAIN_FORMAT = ("progress: {what}: {done}/{total} {unit} ({percent}%), {rate} {unit}/s, "
                "elapsed {elapsed}, eta {eta}")
"""One plain line; ``elapsed`` and ``eta`` are H:MM:SS, ``rate`` a whole number (or one
decimal below 10), ``eta`` ``?`` while nothing is done."""


def clock_text(seconds: float) -> str:
    """``seconds`` as H:MM:SS (the hours unbounded: ``30:00:00``, never ``1 day, ...``)."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def rate_text(rate: float) -> str:
    """A whole number, or one decimal below 10."""
    return f"{rate:.1f}" if rate < 10 else f"{rate:.0f}"


def eta_seconds(done: int, total: int, elapsed: float) -> float | None:
    """The seconds left at the average rate so far; None while nothing is done."""
    if done <= 0 or elapsed <= 0:
        return None
    return max(0, total - done) * elapsed / done


def plain_line(what: str, done: int, total: int, unit: str, elapsed: float) -> str:
    """The plain progress line (``PLAIN_FORMAT``)."""
    eta = eta_seconds(done, total, elapsed)
    return PLAIN_FORMAT.format(
        what=what, done=done, total=total, unit=unit,
        percent=100 * done // total if total else 100,
        rate=rate_text(done / elapsed if elapsed > 0 else 0.0),
        elapsed=clock_text(elapsed), eta="?" if eta is None else clock_text(eta))


def _stderr_is_a_terminal() -> bool:
    try:
        return sys.stderr.isatty() and os.environ.get("TERM", "").lower() != "dumb"
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def _whole() -> Column:
    return Column(no_wrap=True)


class _RateEta(ProgressColumn):
    """``3100 steps/s  elapsed 0:00:13  eta 0:00:18``, from the average rate so far."""

    def __init__(self, unit: str) -> None:
        super().__init__(table_column=_whole())
        self.unit = unit

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        done = int(task.completed)
        eta = eta_seconds(done, int(task.total or 0), elapsed)
        rate = rate_text(done / elapsed if elapsed > 0 else 0.0)
        return Text(f"{rate} {self.unit}/s  elapsed {clock_text(elapsed)}  eta "
                    f"{'?' if eta is None else clock_text(eta)}", style="progress.remaining")


class _Counted(RichProgress):
    """A rich progress whose one task's count is read at each redraw (from rich's thread),
    so the work only adds to an integer."""

    def __init__(self, count: Callable[[], int], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.count = count

    def get_renderables(self) -> Iterable[RenderableType]:
        for task_id in self.task_ids:
            self.update(task_id, completed=self.count())
        yield from super().get_renderables()


class Progress:
    """``with Progress(what, total, unit) as p: ... p.advance(n) ...``: the progress of
    ``total`` units of work (module docstring for the modes). ``clock`` and ``stream`` are
    for tests (a fake clock; a file standing for standard error, which forces ``plain``)."""

    def __init__(self, what: str, total: int, unit: str, *, enabled: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 stream: TextIO | None = None) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.enabled = enabled
        self.clock = clock
        self.stream = stream
        self.mode = "off"
        self.done = 0
        self._t0 = 0.0
        self._next = 0.0
        self._bar: RichProgress | None = None

    def __enter__(self) -> Progress:
        self._t0 = self.clock()
        if not self.enabled:
            return self
        if self.stream is None and _stderr_is_a_terminal():
            self.mode = "bar"
            console = Console(stderr=True, force_terminal=True)
            self._bar = _Counted(  # the texts keep whole; a narrow terminal shrinks the bar
                lambda: self.done, TextColumn("{task.description}", table_column=_whole()),
                BarColumn(bar_width=20), MofNCompleteColumn(table_column=_whole()),
                TextColumn("[progress.percentage]{task.percentage:>3.0f}%",
                           table_column=_whole()),
                _RateEta(self.unit), console=console, transient=True,
                refresh_per_second=REDRAW_PER_S, redirect_stdout=sys.stdout.isatty(),
                redirect_stderr=True)
            self._bar.add_task(self.what, total=self.total)
            self._bar.start()
        else:
            self.mode = "plain"
            self._next = self._t0 + PLAIN_EVERY_S
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    @property
    def console(self) -> Console | None:
        """The bar's console while it shows (else None). A rich console of the caller's
        bypasses the bar's redirection of the standard streams: to print on the terminal
        the bar is on without tearing it, print through this one."""
        return None if self._bar is None else self._bar.console

    def advance(self, n: int = 1) -> None:
        """``n`` more units done: the bar reads the count when it redraws; a plain line is
        printed when ``PLAIN_EVERY_S`` has passed since the last."""
        self.done += n
        if self.mode == "plain" and (now := self.clock()) >= self._next:
            self._line(now)

    def _line(self, now: float) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        print(plain_line(self.what, self.done, self.total, self.unit, now - self._t0),
              file=stream, flush=True)
        self._next = now + PLAIN_EVERY_S
