"""The broker process: a ``BrokerCore`` behind the wire, registered in ZooKeeper, hosting a
controller candidate (``kcontrol broker``).

Modules: ``process`` (``BrokerNode`` and ``BrokerSettings``: the assembly, start and stop),
``effects`` (``BrokerExecutor``: the event thread that executes the core's effects),
``isr_expander`` (leaders take live replicas back into the ISR), ``metrics`` (Prometheus),
``logs`` (log records written by a thread of their own), ``metadata_audit`` (the live
audit's check of every broker's metadata over the wire: ``kcontrol audit --brokers``).
"""

from adapters.broker.process import BrokerNode, BrokerSettings, BrokerStartError

__all__ = ["BrokerNode", "BrokerSettings", "BrokerStartError"]
