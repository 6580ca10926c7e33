"""A campaign run to its end whatever happens: Ctrl-C, SIGTERM and SIGHUP stop it (exit 130), one
of the campaign's errors fails it (exit 1); in every case the results are collected, everything
the campaign started is stopped, the report printed and written (``--json``)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape

from model_check.json_option import to_stdout, write_json

INTERRUPTED = 130


class Runnable(Protocol):
    """What ``run_to_end`` needs of a campaign."""

    report: Any
    t0: float

    def run(self) -> Any: ...

    def collect(self) -> None:
        """Copy the workload's figures into the report."""

    def close(self) -> None:
        """Stop everything the campaign started."""


class Stopped(Exception):
    """A signal asked the campaign to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def raise_stopped(signum: int, _frame: Any) -> None:
    raise Stopped(signum)


def run_to_end(campaign: Runnable, console: Console, json_path: Path | None,
               errors: tuple[type[BaseException], ...]) -> tuple[int, Any]:
    """Run ``campaign``; returns (exit code, report): 0 only when the report is ok."""
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, raise_stopped) for s in handled}
    code = 0
    try:
        campaign.run()
    except (KeyboardInterrupt, Stopped) as exc:
        campaign.report.aborted = ("interrupted" if isinstance(exc, KeyboardInterrupt)
                                   else f"stopped by {exc}")
        code = INTERRUPTED
    except errors as exc:
        campaign.report.aborted = str(exc)
        console.print(f"[bold red]campaign failed:[/] {escape(str(exc))}")
        code = 1
    finally:
        for s in (*handled, signal.SIGINT):  # a second Ctrl-C must not cut the clean-up short
            signal.signal(s, signal.SIG_IGN)
        try:
            campaign.collect()
            campaign.close()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    report = campaign.report
    report.duration_s = time.monotonic() - campaign.t0
    report.print(console)
    if json_path is not None:
        write_json(json_path, report.to_json())
        if not to_stdout(json_path):
            console.print(f"report written to {json_path}")
    if code == 0 and not report.ok:
        code = 1
    return code, report


__all__ = ["Runnable", "Stopped", "raise_stopped", "run_to_end"]
