"""Support for the model checker tests: a tiny scenario and a stub invariant.

(No ``__init__.py`` here: the directory's package name would shadow ``model_check``.)
"""

from __future__ import annotations

from typing import NamedTuple

from model_check.checks import Checks
from model_check.world import World

MUTANT_TOML = """
description = "2 brokers; a topic is created while broker 2 may crash and restart"
brokers = 2
depth = 8
[world]
auto_leader_rebalance = false
[faults]
broker_crash = 1
broker_restart = 1
[[admin]]
op = "create-topic"
name = "u"
partitions = 1
replication_factor = 2
"""
"""The broker-epoch mutant's minimal counterexample is 7 steps after the setup: the
controller sends for the topic, broker 2 crashes and restarts, the old request arrives."""
MUTANT_DEPTH = 7


class EpochView(NamedTuple):
    epoch: int
    pending: bool


class Bad(NamedTuple):
    invariant: str
    detail: str


def epoch_below(limit: int) -> Checks:
    """A deliberately strict invariant: ``/controller_epoch`` stays below ``limit``."""

    def view(w: World) -> EpochView:
        return EpochView(w.zk.data("/controller_epoch").epoch, not w.is_quiescent())

    def state(v: EpochView) -> list[Bad]:
        return [Bad("epoch-below", f"controller epoch {v.epoch}")] if v.epoch >= limit else []

    return Checks(view=view, state=state, name=f"epoch-below-{limit}")
