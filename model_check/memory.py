"""The memory the process uses, for the exhaustive search's level table."""

from __future__ import annotations

import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int | None:
    """The current resident set size of this process (not the peak), from
    ``/proc/self/statm``; None where there is no ``/proc`` (not Linux)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


def rss_mib_text() -> str:
    """``rss_bytes`` in whole MiB, or ``-`` when unknown."""
    rss = rss_bytes()
    return "-" if rss is None else f"{rss / 2**20:.0f}"
