"""Scheduling priority for the control plane's threads: the operating system's half of
KIP-291's isolation (seed 002).

A separate listener keeps controller requests out of the data plane's *queue*; it does not
keep them off the data plane's *CPUs*. On a broker whose clients keep every core busy, a
control-plane thread that wakes for a LeaderAndIsr waits for the kernel to give it a CPU:
``benchmarks/bench_control_plane_isolation.py`` measured the flooded p99 the same whether the
Metadata flood hit the probed broker or *another process* on the machine (7.0 vs 7.7 ms
against ~2 ms unloaded), so no in-process change could fix it. The threads that carry
controller requests -- the control-plane listener and handler on the broker, the controller's sender
thread per broker (``channel_manager``) -- therefore ask the kernel for ``SCHED_FIFO`` at the
lowest real-time priority (1): when they wake they run at once, ahead of every ordinary
thread. They sleep between requests (selector, queue), the interpreter lock still shares
the CPU with the process's other threads while they work, and the kernel's real-time
throttling (``sched_rt_runtime_us``: 95% by default) bounds them anyway.

Modes (``kcontrol broker|controller --control-plane-priority``):

* ``auto`` (the commands' default): real-time when the process may (root,
  ``CAP_SYS_NICE`` or ``RLIMIT_RTPRIO`` >= 1), else ordinary priority and one warning;
* ``realtime``: the same, but a process that may not is refused at start (``check``);
* ``normal``: never asks (the library default: in-process servers in tests, embedding).

Only the calling thread changes (Linux applies ``sched_setscheduler(0, ...)`` per thread).
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger("kcontrol.priority")

AUTO, REALTIME, NORMAL = "auto", "realtime", "normal"
MODES = (AUTO, REALTIME, NORMAL)
RT_PRIORITY = 1

_mode = NORMAL
_warned = False  # the first thread's outcome was logged at INFO/WARNING, the rest at DEBUG
_lock = threading.Lock()


class PriorityError(RuntimeError):
    """``realtime`` asked for where the process may not use it."""


def configure(mode: str) -> None:
    """The process-wide mode (set once by the command, before threads start)."""
    global _mode, _warned
    if mode not in MODES:
        raise ValueError(f"unknown control-plane priority {mode!r} (one of {', '.join(MODES)})")
    _mode = mode
    _warned = False


def mode() -> str:
    return _mode


def _set_fifo() -> None:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))


def _set_normal() -> None:
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def available() -> str | None:
    """None when this process may run a thread at ``SCHED_FIFO``; else why not. Tried on a
    short-lived thread of its own, so the caller's scheduling never changes."""
    if not hasattr(os, "sched_setscheduler") or not hasattr(os, "SCHED_FIFO"):
        return "this platform has no sched_setscheduler"
    out: list[str | None] = []

    def probe() -> None:
        try:
            _set_fifo()
            _set_normal()
            out.append(None)
        except OSError as exc:
            out.append(f"sched_setscheduler(SCHED_FIFO) refused: {exc.strerror} (needs root, "
                       f"CAP_SYS_NICE or an RLIMIT_RTPRIO of at least {RT_PRIORITY})")

    t = threading.Thread(target=probe, name="kcontrol-priority-probe")
    t.start()
    t.join()
    return out[0] if out else "the probe thread failed"


def check(mode_: str) -> None:
    """For ``realtime``: raise ``PriorityError`` (with the reason) when it cannot be had."""
    if mode_ == REALTIME:
        reason = available()
        if reason is not None:
            raise PriorityError(f"--control-plane-priority realtime: {reason}; use auto "
                                f"(falls back to ordinary priority) or normal")


def raise_priority(what: str) -> str:
    """Called by a control-plane thread on itself: ``"realtime"`` or ``"normal"`` (what it
    now runs at). Never raises: a refusal in ``auto`` mode is warned about once."""
    global _warned
    if _mode == NORMAL or not hasattr(os, "SCHED_FIFO"):
        return NORMAL
    try:
        _set_fifo()
    except OSError as exc:
        with _lock:
            first, _warned = not _warned, True
        if first:
            log.warning("control-plane threads run at ordinary priority (%s: %s); under a "
                        "busy data plane their latency grows", what, exc.strerror)
        return NORMAL
    with _lock:
        first, _warned = not _warned, True
    log.log(logging.INFO if first else logging.DEBUG,
            "%s runs at SCHED_FIFO priority %d (control-plane priority %s)", what, RT_PRIORITY,
            _mode)
    return REALTIME


def policy(tid: int) -> int | None:
    """The scheduling policy of thread ``tid`` of this process (tests, diagnostics)."""
    try:
        return os.sched_getscheduler(tid)
    except OSError:
        return None
