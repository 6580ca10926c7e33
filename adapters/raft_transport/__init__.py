"""The metadata quorum on the wire: a transport for ``fsm.raft.messages`` over Kafka's
protocol (the quorum APIs of ``adapters.network.codec.raft_registry``).

- ``transport``: :class:`RaftTransport` -- a listener, one outbound connection per voter,
  bounded queues, reconnects with backoff, request timeouts; one I/O thread;
- ``connection``: one connection's buffers and the requests it waits for;
- ``voters``: ``controller.quorum.voters`` parsed.

How the node shell (``adapters.raft_node``) uses it::

    from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
    from adapters.raft_log.wire_records import decode_batches, encode_batches
    from adapters.raft_transport import RaftTransport, parse_voters

    voters = parse_voters("1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095")
    converter = RaftConverter(RecordsCodec(encode_batches, decode_batches), cluster_id)

    def on_message(source: int, message: object) -> None:  # called on the I/O thread
        inbox.put(events.Received(source, message, now_ms()))  # bounded, for the core's thread

    transport = RaftTransport(1, voters, voters[1], on_message, converter=converter,
                              retry_backoff_ms=config.retry_backoff_ms,
                              request_timeout_ms=config.request_timeout_ms).start()
    ...
    for effect in core.handle(event):  # the core's thread
        if isinstance(effect, effects.Send):
            transport.send(effect.destination, effect.message)  # request or response
    ...
    transport.close()

``send`` never blocks; requests go to voters only (a ``KeyError`` otherwise), responses go
back on the connection their request came in on -- to any source ``on_message`` named,
observers and tools included (a tool's id is at or below ``transport.ANONYMOUS_BASE``).
A ``SendRecords`` / ``SendSnapshotChunk`` effect becomes a ``send`` of its response once the
shell has filled in the batches or the chunk.
"""

from adapters.raft_transport.transport import (
    ANONYMOUS_BASE,
    RaftTransport,
    TransportStats,
)
from adapters.raft_transport.voters import parse_voters

__all__ = ["ANONYMOUS_BASE", "RaftTransport", "TransportStats", "parse_voters"]
