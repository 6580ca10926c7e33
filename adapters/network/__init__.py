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
