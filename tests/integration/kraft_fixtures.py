"""What the KRaft integration tests share: ``eventually`` (poll until an answer comes),
``running_kraft`` (a cluster of real controller and broker processes for a fixture: skipped
where this checkout has no broker role, the nodes' last log lines printed when it does not
come up, stopped in every case) and ``committed_topics`` (the active controller's committed
image)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from adapters.cluster.kraft_launcher import KRaftCluster, has_broker_role

T = TypeVar("T")
UP_TIMEOUT_S = 60


def eventually(what: str, probe: Callable[[], T | None], timeout: float = 15.0,
               pause: float = 0.05, retry_on: tuple[type[Exception], ...] = ()) -> T:
    """``probe()`` until it returns something truthy (a broker's metadata lags the commit by a
    fetch); an exception of ``retry_on`` counts as no answer yet. Fails naming ``what`` and
    the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except retry_on as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(pause)
    raise AssertionError(f"{what}: not within {timeout:g} s (last: {last!r})")


@contextlib.contextmanager
def running_kraft(root: Path, brokers: int, *, tail: int = 20, **options: Any
                  ) -> Iterator[KRaftCluster]:
    """3 controllers and ``brokers`` brokers in ``root`` (``options``: ``KRaftCluster``'s),
    up; each node's last ``tail`` log lines printed if they do not come up; stopped at the
    end."""
    if not has_broker_role():
        pytest.skip("the broker role (adapters.kraft_broker) is not reachable through "
                    "kcontrol node in this checkout")
    c = KRaftCluster(root, 3, brokers, **options)
    try:
        c.up(timeout=UP_TIMEOUT_S)
        yield c
    except BaseException:
        for n in c.nodes():
            print(f"--- {n.name}\n" + "\n".join(
                n.log_path.read_text(errors="replace").splitlines()[-tail:]))
        raise
    finally:
        c.stop()


def committed_topics(c: KRaftCluster) -> dict[str, Any]:
    """The active controller's committed topics (empty while it is not active yet)."""
    v = c.wait_leader(30)
    got = c.controllers[v.leader].request("topics")
    return got["topics"] if got.get("active") else {}


__all__ = ["committed_topics", "eventually", "running_kraft"]
