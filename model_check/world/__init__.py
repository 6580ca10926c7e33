"""A deterministic simulated world: in-memory ZooKeeper, channels, brokers, a scheduler.

``World(WorldConfig(...))``; ``enabled_actions()`` / ``apply(action)``; ``snapshot()`` /
``World.restore(snap, config)``; ``fingerprint(snapshot)``; ``is_quiescent()``. A search
passes its memos (``model_check.memo.Memos``) as the last argument of ``World`` and
``World.restore``. The runner (``python -m model_check.world.runner``) prints one line per
step.
"""

from model_check.world.actions import Action
from model_check.world.config import (
    AddPartitions,
    ControlledShutdownOf,
    CreateTopic,
    DeleteTopic,
    PreferredElection,
    Reassign,
    WorldConfig,
)
from model_check.world.fingerprint import fingerprint
from model_check.world.world import World

__all__ = [
    "Action",
    "AddPartitions",
    "ControlledShutdownOf",
    "CreateTopic",
    "DeleteTopic",
    "PreferredElection",
    "Reassign",
    "World",
    "WorldConfig",
    "fingerprint",
]
