"""``kcontrol cluster up --mode kraft``: a local KRaft cluster in the foreground -- started,
described (bootstrap servers, ``controller.quorum.voters``, the cluster id, the commands to
point at it), kept running until Ctrl-C (or SIGTERM/SIGHUP), then stopped.

The one line on stdout is the bootstrap servers, printed once the controllers have a leader and
every broker is registered and unfenced (``BOOTSTRAP=$(... | head -1)`` in a script, the
readiness line in a test); everything else goes to stderr. A node that exits on its own stops
the cluster with exit status 1 and the end of that node's log.
"""

from __future__ import annotations

import importlib.util
import signal
import time
from pathlib import Path
from types import FrameType

import click

from adapters.cluster.kraft_launcher import (
    KRaftCluster,
    KRaftClusterError,
    _cli_commands,
    has_broker_role,
)

WATCH_S = 0.5


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def _err(text: str) -> None:
    click.echo(text, err=True)


def describe(c: KRaftCluster, leader: int, epoch: int) -> list[str]:
    """What a person needs to use the cluster, as lines."""
    lines = [
        f"cluster id:               {c.cluster_id}",
        f"controller.quorum.voters: {c.quorum_voters}",
        f"active controller:        {leader} (epoch {epoch})",
    ]
    if c.brokers:
        first_broker = next(iter(c.brokers.values())).address
        lines.append(f"bootstrap servers:        {c.bootstrap_servers} "
                     f"(brokers {', '.join(map(str, c.brokers))})")
    lines += [f"configs and logs:         {c.root}/<role>-<id>.properties, "
              f"{c.root}/<role>-<id>.log"]
    tries: list[str] = []
    commands = _cli_commands()
    if "quorum" in commands:
        tries.append(f"  kcontrol quorum describe --bootstrap-controller "
                     f"{c.bootstrap_controllers} --status")
    if "metadata-shell" in commands:
        first = next(iter(c.controllers.values()))
        tries.append(f"  kcontrol metadata-shell --directory {first.data_dir} "
                     "ls /image/topics/byName")
        if importlib.util.find_spec("adapters.metadata_tools.quorum_reader") is not None:
            tries.append(f"  kcontrol metadata-shell --bootstrap-controller "
                         f"{c.quorum_voters} ls /image/topics/byName")
    if "audit" in commands:
        tries.append(f"  kcontrol audit --kraft {c.root}")
    if c.brokers:
        if "cluster-id" in commands:
            tries.append(f"  kcontrol cluster-id --bootstrap-server {first_broker}")
        tries.append(f"  python -c \"from kafka import KafkaAdminClient as A; "
                     f"print(A(bootstrap_servers='{first_broker}').describe_cluster())\"")
        tries.append(f"  kafka-topics.sh --bootstrap-server {first_broker} --create "
                     "--topic t --partitions 3 --replication-factor 2")
    return lines + (["try:", *tries] if tries else [])


def run_kraft_up(directory: Path, controllers: int, brokers: int, timeout: float,
                 snapshot_every: int) -> int:
    """Start, describe, wait for a signal, stop; the exit status."""
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, _raise_stop) for s in handled}
    c: KRaftCluster | None = None
    code = 0
    try:
        if brokers and not has_broker_role():
            _err(f"skipped: {brokers} broker(s) -- the broker role of `kcontrol node` is not "
                 "available in this checkout; starting the controllers only")
            brokers = 0
        c = KRaftCluster(directory, controllers, brokers,
                         snapshot_every_records=snapshot_every, die_with_parent=True,
                         new_session=True)
        _err(f"starting {controllers} controller(s) and {brokers} broker(s) in {c.root} "
             f"(cluster id {c.cluster_id}) ...")
        view = c.up(timeout, progress=_err)
        for line in describe(c, view.leader, view.epoch):
            _err(line)
        _err("running; Ctrl-C stops every node")
        click.echo(c.bootstrap_servers if c.brokers else c.bootstrap_controllers)
        while True:
            c.check_alive()
            time.sleep(WATCH_S)
    except KRaftClusterError as exc:
        _err(f"kcontrol cluster up: error: {exc}")
        code = 1
    except (KeyboardInterrupt, _Stop) as exc:
        _err(f"{'SIGINT' if isinstance(exc, KeyboardInterrupt) else exc}: stopping")
    finally:
        for s in (*handled, signal.SIGINT):  # a second Ctrl-C must not cut the stop short
            signal.signal(s, signal.SIG_IGN)
        try:
            if c is not None:
                for line in c.stop():
                    _err(line)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if code == 0:
        _err("every node stopped")
    return code
