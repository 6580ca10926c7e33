"""Running a KRaft campaign to its end whatever happens: Ctrl-C, SIGTERM and SIGHUP stop it
(exit 130), a campaign error fails it (exit 1); in every case everything it started is
stopped, the report printed and written (``--json``)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from adapters.chaos.runner import _raise_stop, _Stop
from model_check.json_option import to_stdout, write_json


def finish(campaign: Any, console: Console, json_path: Path | None,
           errors: tuple[type[BaseException], ...]) -> tuple[int, Any]:
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, _raise_stop) for s in handled}
    code = 0
    try:
        campaign.run()
    except (KeyboardInterrupt, _Stop) as exc:
        campaign.report.aborted = ("interrupted" if isinstance(exc, KeyboardInterrupt)
                                   else f"stopped by {exc}")
        code = 130
    except errors as exc:
        campaign.report.aborted = str(exc)
        console.print(f"[bold red]campaign failed:[/] {escape(str(exc))}")
        code = 1
    finally:
        for s in (*handled, signal.SIGINT):  # a second Ctrl-C must not cut the clean-up short
            signal.signal(s, signal.SIG_IGN)
        try:
            if campaign.workload is not None:
                got = campaign.workload.snapshot()
                campaign.report.actions_by_kind = got["actions_by_kind"]
                campaign.report.action_outcomes = got["action_outcomes"]
                campaign.report.refused_actions = got["refused"]
                campaign.report.operations = got["operations"]
            if campaign.background is not None:
                campaign.report.background_actions = campaign.background.sent
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
