"""Building and restoring the ``fsm`` objects a broker process hosts (constant configs cached)."""

from __future__ import annotations

from functools import lru_cache

from fsm.broker import BrokerConfig, BrokerCore
from fsm.controller import Controller, ControllerConfig
from model_check.world.config import WorldConfig
from model_check.world.fingerprint import Shared


@lru_cache(maxsize=256)
def controller_config(config: WorldConfig, b: int) -> ControllerConfig:
    return ControllerConfig(
        broker_id=b,
        unclean_leader_election_enable=config.unclean_leader_election,
        auto_leader_rebalance_enable=config.auto_leader_rebalance,
    )


@lru_cache(maxsize=256)
def broker_config(config: WorldConfig, b: int) -> BrokerConfig:
    return BrokerConfig(broker_id=b,
                        controlled_shutdown_max_retries=config.controlled_shutdown_max_retries)


def new_controller(config: WorldConfig, b: int) -> Controller:
    return Controller(controller_config(config, b))


@lru_cache(maxsize=256)
def fresh_controller_snapshot(config: WorldConfig, b: int) -> tuple:
    """The snapshot of ``new_controller(config, b)`` (a process that starts or dies gets
    one: restoring it is the same as building a new controller)."""
    return new_controller(config, b).snapshot()


def new_broker(config: WorldConfig, b: int) -> BrokerCore:
    return BrokerCore(broker_config(config, b))


shared_snapshot = Shared()
"""Core snapshots (controllers' and broker cores'), one object per value: what the step
memo hands out, and what a state arriving from elsewhere (a Spark bundle) is mapped to
(``World.canonical``), so that the memos keyed by identity know it. An intern table, not a
memo of the search (``fingerprint.Shared``)."""


def restore_controller(snap: tuple, config: WorldConfig, b: int) -> Controller:
    return Controller.restore(snap, controller_config(config, b))


def restore_broker(snap: tuple, config: WorldConfig, b: int) -> BrokerCore:
    return BrokerCore.restore(snap, broker_config(config, b))


def broker_state_name(core: BrokerCore) -> str:
    return core.state.value
