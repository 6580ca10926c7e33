"""Names for the fields of the cores' snapshots.

A snapshot is a plain tuple of builtins (``Controller.snapshot()``, ``BrokerCore.snapshot()``):
it is pickled for fingerprints and marshalled to Spark millions of times, and a NamedTuple
instance would pickle through Python-level code and cost time. So a snapshot's layout is
named by a ``typing.NamedTuple`` *class*, declared next to its producer and never filled
with a snapshot's values: its ``_fields`` list the fields in order, and ``positions(Layout)``
is the one instance whose every field holds its own position, for readers that take a
field by name::

    CONTROLLER = positions(ControllerSnapshotFields)
    epoch = snap[CONTROLLER.epoch]              # not snap[2]

The tests hold each layout to its producer (as many names as fields, and the values
where the names say).
"""

from __future__ import annotations

from typing import Any, NamedTuple


def positions(layout: type) -> Any:
    """The instance of the NamedTuple class ``layout`` whose every field holds its position
    in the layout (``positions(BrokerInfoFields).epoch == 1``)."""
    return layout._make(range(len(layout._fields)))  # type: ignore[attr-defined]


class BrokerInfoFields(NamedTuple):
    """A ``BrokerInfo`` in a snapshot: the controller's live brokers
    (``ContextFields.live``) and a broker's metadata cache (``MetadataCacheFields``)."""

    broker_id: int
    epoch: int  # the broker epoch: the czxid of its registration
    endpoints: tuple  # ``(listener, host, port, security_protocol)`` each
    rack: str | None


BROKER_INFO = positions(BrokerInfoFields)
