"""One driver per core: an event in, the core's effects out, each to a port.

* ``ports`` -- the ``Protocol``s a shell implements: ``ControllerPort`` (the live controller
  service's, the world's) and ``BrokerPort``;
* ``controller`` -- ``ControllerDriver``: the controller's loop (one write in flight, its
  result first, the cluster load after it, the bounced broker's channel announced again);
* ``broker`` -- ``BrokerDriver``: the broker core's loop.

The live shell (``adapters``) and the checker's world (``model_check.world``) run these very
loops and differ only in their ports, so the checker proves what is done with the cores'
decisions, not only the decisions.
"""

from fsm.driver.broker import BrokerDriver
from fsm.driver.controller import MAX_ROUNDS, ControllerDriver
from fsm.driver.ports import BrokerPort, ControllerPort

__all__ = ["MAX_ROUNDS", "BrokerDriver", "BrokerPort", "ControllerDriver", "ControllerPort"]
