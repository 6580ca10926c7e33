"""The network side: the Kafka wire codec, broker listeners and the controller's channels.

Modules (the codec is ``adapters.network.codec``):

- ``listener_config``: ``--listeners`` / ``--control-plane-listener`` parsing and checks;
- ``request_channel``: a plane's bounded request queue, handler threads, ``RequestHandler``;
- ``listeners``: one listener's socket and selector thread (framing, parsing, ordering);
- ``server``: ``SocketServer``, the control and data planes of one broker (KIP-291);
- ``broker_handler``: ``BrokerRequestHandler``, a ``BrokerCore`` behind the wire;
- ``metadata_answers``: Metadata answers encoded once per change of the metadata cache;
- ``controlled_shutdown``: ``ControlledShutdownRouter``, data plane -> local controller;
- ``broker_channels``: ``BrokerChannels``, where the controller service's requests go, and
  ``LoggingChannels``, a stand-in that only logs them;
- ``channel_manager``: ``ControllerChannelManager``, the controller's ``BrokerChannels``;
- ``client``: ``WireClient``, a blocking request/response client.

How a broker process assembles them::

    cfg = parse_listener_config(args.listeners, args.control_plane_listener)
    lock = threading.Lock()                      # every BrokerCore call holds it
    router = ControlledShutdownRouter()
    handler = BrokerRequestHandler(core, lock=lock, advertised=advertised_apis(cfg),
                                   router=router, on_effects=execute_broker_effects)
    server = SocketServer(cfg, handler).start()  # binds (port 0 -> server.ports)
    core_config = BrokerConfig(broker_id, endpoints=server.endpoints())  # to register
    channels = ControllerChannelManager(broker_id, router=router,
                                        control_plane_listener=cfg.control_plane_listener)
    service = ControllerService(broker_id, zk_hosts, channels=channels)
    router.attach(service.submit, lambda: service.is_active)
    service.start()
    ...; server.metrics() | channels.metrics()   # for the Prometheus endpoint
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adapters.network.broker_handler import BrokerRequestHandler, metadata_response
    from adapters.network.channel_manager import Backoff, ControllerChannelManager
    from adapters.network.client import WireClient
    from adapters.network.controlled_shutdown import ControlledShutdownRouter
    from adapters.network.listener_config import (
        ListenerConfig,
        ListenerConfigError,
        ListenerSpec,
        parse_listener_config,
    )
    from adapters.network.request_channel import Plane, RequestHandler
    from adapters.network.server import (
        CONTROL_PLANE_APIS,
        DATA_PLANE_APIS,
        SocketServer,
        advertised_apis,
        plane_apis,
    )

#: Where each name of ``__all__`` is defined: imported on first use (PEP 562), so that a
#: module of the codec (``adapters.network.codec...``, which imports this package first) does
#: not bring the ZooKeeper-mode broker's handler and core into a KRaft node.
_HOMES = {
    "BrokerRequestHandler": "broker_handler",
    "metadata_response": "broker_handler",
    "Backoff": "channel_manager",
    "ControllerChannelManager": "channel_manager",
    "WireClient": "client",
    "ControlledShutdownRouter": "controlled_shutdown",
    "ListenerConfig": "listener_config",
    "ListenerConfigError": "listener_config",
    "ListenerSpec": "listener_config",
    "parse_listener_config": "listener_config",
    "Plane": "request_channel",
    "RequestHandler": "request_channel",
    "CONTROL_PLANE_APIS": "server",
    "DATA_PLANE_APIS": "server",
    "SocketServer": "server",
    "advertised_apis": "server",
    "plane_apis": "server",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CONTROL_PLANE_APIS",
    "DATA_PLANE_APIS",
    "Backoff",
    "BrokerRequestHandler",
    "ControlledShutdownRouter",
    "ControllerChannelManager",
    "ListenerConfig",
    "ListenerConfigError",
    "ListenerSpec",
    "Plane",
    "RequestHandler",
    "SocketServer",
    "WireClient",
    "advertised_apis",
    "metadata_response",
    "parse_listener_config",
    "plane_apis",
]
