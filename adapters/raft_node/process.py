"""``python -m adapters.raft_node``: one voter process (see ``args`` for the command line).

Logs on stderr: role changes, the high watermark (at most once a second), the admin port.
SIGTERM or SIGINT stops it gracefully (a leader resigns with EndQuorumEpoch first), exit
status 0. A bad argument exits with status 2 and a line naming it; a node that halted (an
fsync that failed, a bug in a core) exits with status 3, within ``HALT_GRACE_S`` whatever its
parts do on the way out; a start that failed (the log
directory unusable, the port taken) exits with status 1. ``kill -9`` is what the tests use
to crash it: the log and the quorum-state recover on the next start.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from adapters.raft_node.args import ArgumentError, parse_args
from adapters.raft_node.node import QuorumNode

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EXIT_BAD_ARGUMENT = 2
EXIT_START_FAILED = 1
EXIT_HALTED = 3
WAKE_S = 1.0
HALT_GRACE_S = 10.0
"""After a halt, the longest the parts may take to stop before the process exits anyway."""


class Lifetime:
    """Until when a node process runs: SIGTERM/SIGINT (a graceful stop) or a halt of one of
    its parts (``on_halt``, given to each part)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.halted: list[str] = []

    def on_halt(self, reason: str) -> None:
        self.halted.append(reason)
        self.done.set()

    def install_signals(self) -> dict[int, Any]:
        """SIGTERM and SIGINT end the wait (only the main thread may install handlers: an
        embedded caller on another thread sets ``done`` itself). Returns the handlers they
        replace (``restore_signals``)."""
        before: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                before[sig] = signal.signal(sig, lambda *_: self.done.set())
        return before

    @staticmethod
    def restore_signals(before: dict[int, Any]) -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def configure_logging(level: str = "INFO") -> None:
    """One line per event on stderr (does nothing if the caller configured logging)."""
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)


def run_until_stopped(start: Callable[[], None], stop: Callable[[bool], None],
                      lifetime: Lifetime, what: str,
                      logger: logging.Logger | None = None, *,
                      halt_grace_s: float = HALT_GRACE_S,
                      exit_now: Callable[[int], Any] = os._exit) -> int:
    """``start()``, wait for a signal or a halt, ``stop(graceful)``; the exit status: 0 after
    a signal, ``EXIT_HALTED`` after a halt, ``EXIT_START_FAILED`` if ``start`` raised (said in
    one line, whatever had started stopped).

    After a halt the process is on its way out whatever ``stop`` does: should it not return
    within ``halt_grace_s`` (a thread that does not join, a socket that does not close), a
    watchdog says so and calls ``exit_now(EXIT_HALTED)`` (``os._exit``: no cleanup, as Kafka
    halts on a metadata log I/O error) -- a node that failed its disk never lingers."""
    logger = logger or logging.getLogger("kcontrol.raft")
    before = lifetime.install_signals()
    try:
        try:
            start()
        except Exception as exc:  # noqa: BLE001 -- said in one line, then the exit status
            logger.error("%s did not start: %s: %s", what, type(exc).__name__, exc)
            stop(False)
            return EXIT_START_FAILED
        while not lifetime.done.wait(WAKE_S):
            pass
        watchdog = None
        if lifetime.halted:
            logger.error("%s halted: %s", what, "; ".join(lifetime.halted))
            watchdog = _halt_watchdog(what, logger, halt_grace_s, exit_now)
        try:
            stop(not lifetime.halted)
        finally:
            if watchdog is not None:
                watchdog.cancel()
        return EXIT_HALTED if lifetime.halted else 0
    finally:
        lifetime.restore_signals(before)


def _halt_watchdog(what: str, logger: logging.Logger, grace_s: float,
                   exit_now: Callable[[int], Any]) -> threading.Timer:
    def expire() -> None:
        logger.error("%s did not stop within %g s of its halt: exiting now", what, grace_s)
        for handler in logger.handlers or logging.getLogger().handlers:
            handler.flush()
        exit_now(EXIT_HALTED)

    timer = threading.Timer(grace_s, expire)
    timer.daemon = True
    timer.name = "kcontrol-halt-watchdog"
    timer.start()
    return timer


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except ArgumentError as exc:
        print(f"python -m adapters.raft_node: error: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENT
    configure_logging(args.log_level)
    lifetime = Lifetime()
    node = QuorumNode(args, on_halt=lifetime.on_halt)
    return run_until_stopped(node.start, lambda graceful: node.stop(resign=graceful),
                             lifetime, f"node {args.node_id}")
