"""``python -m adapters.kraft_broker``: one KRaft broker process from its command line
(``args``), until SIGTERM/SIGINT (a controlled shutdown) or the broker exits by itself.
Exit status: 0 after a signal, 2 for a bad argument (a line naming it), 1 when it did not
start, 3 when it exited by itself (the registration timed out, a part halted)."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from adapters.kraft_broker.args import parse_args
from adapters.kraft_broker.broker import start_broker
from adapters.raft_node.args import ArgumentError
from adapters.raft_node.process import configure_logging

log = logging.getLogger("kcontrol.kraft.broker")


def main(argv: list[str] | None = None) -> int:
    try:
        settings, cluster_id, level = parse_args(sys.argv[1:] if argv is None else argv)
    except ArgumentError as exc:
        print(f"python -m adapters.kraft_broker: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(level)
    done = threading.Event()
    exited: list[str] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    try:
        broker = start_broker(settings, cluster_id,
                              on_exit=lambda why: (exited.append(why), done.set()))
    except Exception as exc:  # noqa: BLE001 -- one line, then the exit status
        log.error("broker %d did not start: %s: %s", settings.node_id, type(exc).__name__, exc)
        return 1
    while not done.wait(1.0):
        pass
    broker.stop()
    return 3 if exited else 0


if __name__ == "__main__":
    sys.exit(main())
