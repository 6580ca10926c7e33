"""``SocketServer``: a broker's listeners, its request planes and their handler threads
(KIP-291, seed 002).

With a control-plane listener (``ListenerConfig.control_plane_listener``):

- the **control plane**: that listener alone, its own selector thread, its own request
  queue of capacity ``control_queue_capacity`` (20, KIP-291's value) and one handler
  thread, which writes its answers itself (``Listener._respond``). Both threads ask the
  kernel for real-time priority (``adapters.host.thread_priority``). It accepts only what the controller sends: LeaderAndIsr, StopReplica,
  UpdateMetadata. Anything else closes the connection;
- the **data plane**: every other listener (one selector thread each), one shared queue
  (``data_queue_capacity``, Kafka's ``queued.max.requests`` = 500) and
  ``data_handler_threads`` handler threads. It accepts ApiVersions, Metadata and
  ControlledShutdown (broker -> controller: Kafka sends it over the inter-broker listener
  to the controller's broker, not over the control plane, whose threads are "exclusively
  for requests from the controller"). A controller API arriving here is refused the way
  Kafka refuses an API not enabled on a listener: the connection is closed (the request
  cannot be answered in a layout the sender trusts; a controller then reconnects to the
  right endpoint). ApiVersions on the data plane advertises only the data-plane APIs.

Without one, every listener is on the data plane and the data plane accepts every API:
controller requests queue behind client requests (Kafka before 2.2, kept for comparison).

A full queue blocks the listener that reads the next request (back-pressure, nothing is
dropped); see ``request_channel``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from adapters.network.codec import DEFAULT_MAX_FRAME_SIZE, SUPPORTED, ApiKey
from adapters.network.codec.registry import CLIENT_APIS, supported_subset
from adapters.network.listener_config import ListenerConfig
from adapters.network.listeners import DEFAULT_MAX_PIPELINED, Listener
from adapters.network.request_channel import Plane, RequestChannel, RequestHandler
from fsm.values import Endpoint

log = logging.getLogger("kcontrol.network")

CONTROL_PLANE_CAPACITY = 20
DATA_PLANE_CAPACITY = 500
CONTROL_PLANE_APIS = frozenset({ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA,
                                ApiKey.UPDATE_METADATA})
DATA_PLANE_APIS = CLIENT_APIS | {ApiKey.CONTROLLED_SHUTDOWN}


def plane_apis(config: ListenerConfig) -> dict[Plane, dict[int, tuple[int, int]]]:
    """api key -> versions accepted on each plane."""
    if config.control_plane is None:
        return {Plane.DATA: dict(SUPPORTED)}
    return {Plane.CONTROL: supported_subset(CONTROL_PLANE_APIS),
            Plane.DATA: supported_subset(DATA_PLANE_APIS)}


def advertised_apis(config: ListenerConfig) -> dict[int, tuple[int, int]]:
    """What ApiVersions advertises (it is only served on the data plane)."""
    return plane_apis(config)[Plane.DATA]


class SocketServer:
    def __init__(self, config: ListenerConfig, handler: RequestHandler, *,
                 control_handler: RequestHandler | None = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
                 data_queue_capacity: int = DATA_PLANE_CAPACITY,
                 control_queue_capacity: int = CONTROL_PLANE_CAPACITY,
                 data_handler_threads: int = 2,
                 max_pipelined: int = DEFAULT_MAX_PIPELINED) -> None:
        self.config = config
        apis = plane_apis(config)
        self.channels: dict[Plane, RequestChannel] = {
            Plane.DATA: RequestChannel(Plane.DATA, handler, capacity=data_queue_capacity,
                                       threads=data_handler_threads)}
        if config.control_plane is not None:
            self.channels[Plane.CONTROL] = RequestChannel(
                Plane.CONTROL, control_handler or handler, capacity=control_queue_capacity,
                threads=1)
        self.listeners: dict[str, Listener] = {}
        for spec in config.listeners:
            plane = Plane.CONTROL if spec.name == config.control_plane_listener else Plane.DATA
            self.listeners[spec.name] = Listener(
                spec, plane, self.channels[plane], apis[plane], max_frame_size=max_frame_size,
                max_pipelined=max_pipelined, allow_non_loopback=config.allow_non_loopback)
        self._started = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> SocketServer:
        """Binds every listener (all or none), then starts the threads."""
        bound: list[Listener] = []
        try:
            for lst in self.listeners.values():
                lst.bind()
                bound.append(lst)
        except OSError as exc:
            spec = lst.spec
            for done in bound:
                done.stop()
            raise OSError(exc.errno, f"cannot bind listener {spec.name} "
                          f"{spec.host}:{spec.port}: {exc.strerror}") from exc
        for ch in self.channels.values():
            ch.start()
        for lst in self.listeners.values():
            lst.start()
        self._started = True
        return self

    def stop(self, timeout: float = 5.0) -> None:
        for ch in self.channels.values():
            ch.begin_stop()
        for lst in self.listeners.values():
            lst.stop(timeout)
        for ch in self.channels.values():
            ch.stop(timeout)
        self._started = False

    def __enter__(self) -> SocketServer:
        return self if self._started else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ queries

    @property
    def ports(self) -> dict[str, int]:
        """Listener name -> bound port (after ``start``)."""
        return {name: lst.port for name, lst in self.listeners.items() if lst.port is not None}

    def port(self, name: str) -> int:
        return self.ports[name]

    @property
    def bound_config(self) -> ListenerConfig:
        """The listener config with ephemeral ports resolved."""
        return self.config.with_ports(self.ports)

    def endpoints(self) -> tuple[Endpoint, ...]:
        """What the broker registers in ``/brokers/ids/<id>`` (bound ports)."""
        return self.bound_config.endpoints()

    def metrics(self) -> dict[str, float]:
        """Flat ``{name: value}``: ``<plane>_plane_<metric>`` and ``listener_<name>_<stat>``.

        Each call samples the idle ratio and request rate over the interval since the
        previous call.
        """
        out: dict[str, float] = {}
        for plane, ch in self.channels.items():
            for k, v in ch.sample().items():
                out[f"{plane.value}_plane_{k}"] = v
        for name, lst in self.listeners.items():
            for k, v in lst.stats().items():
                out[f"listener_{name}_{k}"] = v
        return out

    def queue_size(self, plane: Plane) -> int:
        return self.channels[plane].size

    def accepted_apis(self, listener: str) -> Mapping[int, tuple[int, int]]:
        return self.listeners[listener].supported
