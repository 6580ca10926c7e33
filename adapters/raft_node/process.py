"""``python -m adapters.raft_node``: one voter process (see ``args`` for the command line).

Logs on stderr: role changes, the high watermark (at most once a second), the admin port.
SIGTERM or SIGINT stops it gracefully (a leader resigns with EndQuorumEpoch first), exit
status 0. A bad argument exits with status 2 and a line naming it; a node that halted (an
fsync that failed, a bug in a core) exits with status 3; a start that failed (the log
directory unusable, the port taken) exits with status 1. ``kill -9`` is what the tests use
to crash it: the log and the quorum-state recover on the next start.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from adapters.raft_node.args import ArgumentError, parse_args
from adapters.raft_node.node import QuorumNode

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EXIT_BAD_ARGUMENT = 2
EXIT_START_FAILED = 1
EXIT_HALTED = 3


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except ArgumentError as exc:
        print(f"python -m adapters.raft_node: error: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENT
    logging.basicConfig(level=args.log_level, format=LOG_FORMAT, stream=sys.stderr)
    done = threading.Event()
    halted: list[str] = []

    def on_halt(reason: str) -> None:
        halted.append(reason)
        done.set()

    node = QuorumNode(args, on_halt=on_halt)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    try:
        node.start()
    except Exception as exc:  # noqa: BLE001 -- said in one line, then the exit status
        logging.getLogger("kcontrol.raft").error("node %d did not start: %s: %s",
                                                 args.node_id, type(exc).__name__, exc)
        node.stop(resign=False)
        return EXIT_START_FAILED
    while not done.wait(1.0):
        pass
    node.stop(resign=not halted)
    return EXIT_HALTED if halted else 0
