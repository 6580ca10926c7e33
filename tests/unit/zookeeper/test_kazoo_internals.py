"""What ``adapters/zookeeper/multi_read.py`` takes from kazoo beyond its public API.

``multi_read`` queues many requests at once and reads ``multiRead`` replies itself, so it uses
kazoo's private client fields (``_state``, ``_call``, ``_queue``, ``_connection._write_sock``,
``_session_timeout``) and protocol helpers (``_prefix_root``, the serialization structs). A kazoo
release that renames or reshapes one of them would break bulk reads at run time, on a live
cluster; this test breaks first, on the pinned range in ``pyproject.toml``, and names the field.
No ZooKeeper server is needed: a client that never connected has every field.
"""

from __future__ import annotations

import inspect
import struct
from collections import deque

import kazoo
import pytest
from kazoo.client import CLOSED_STATES, KazooClient
from kazoo.protocol import connection as kazoo_connection
from kazoo.protocol import paths, serialization
from kazoo.protocol.states import KazooState, ZnodeStat

from adapters.zookeeper import multi_read


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def test_installed_kazoo_is_in_the_pinned_range() -> None:
    assert (2, 10) <= _version(kazoo.__version__) < (2, 12), (
        f"kazoo {kazoo.__version__} is outside the range multi_read.py was checked against; "
        "run this module's tests on it, then widen the pin in pyproject.toml")


@pytest.fixture()
def client() -> KazooClient:
    return KazooClient(hosts="127.0.0.1:1", timeout=7.5)


def test_client_private_fields(client: KazooClient) -> None:
    assert client._state in CLOSED_STATES or client._state == KazooState.LOST, client._state
    assert isinstance(client._queue, deque), "call_many extends client._queue with (request, result)"
    assert callable(client._call)
    params = list(inspect.signature(client._call).parameters)
    assert params[:2] == ["request", "async_object"], f"client._call{params}: call_many passes (request, result)"
    assert client._session_timeout == 7500, "multi_read reads the session timeout in ms"
    assert hasattr(client._connection, "_write_sock"), \
        "call_many wakes kazoo's connection thread through connection._write_sock"


def test_connection_thread_sends_one_request_per_wakeup_byte() -> None:
    """``call_many`` writes N bytes to wake the connection thread for N queued requests: the
    thread must read its wake-up socket and send from ``client._queue``."""
    source = inspect.getsource(kazoo_connection.ConnectionHandler)
    assert "_read_sock" in source and "_write_sock" in source
    assert "client._queue" in source


def test_protocol_helpers() -> None:
    assert paths._prefix_root("/chroot", "/a") == "/chroot/a"
    assert isinstance(serialization.int_struct, struct.Struct)
    assert serialization.multiheader_struct.size == 9, "type:int done:bool err:int"
    assert serialization.stat_struct.size == 68
    assert ZnodeStat._fields[:2] == ("czxid", "mzxid")
    assert len(ZnodeStat._fields) == 11
    assert callable(serialization.read_string)
    assert multi_read.HEADER_BYTES == 9


def test_watcher_table_and_zxid_set_watches_relies_on(client: KazooClient) -> None:
    """``set_watches``: the watchers go into ``client._data_watchers`` (a set per chrooted
    path) when kazoo's connection thread serializes the request, the thread that also pops
    them for a notification; the relative zxid is ``client.last_zxid``."""
    from collections import defaultdict

    assert isinstance(client._data_watchers, defaultdict)
    assert client._data_watchers.default_factory is set
    assert client.last_zxid == 0, "the zxid of the last reply received (0 before any)"
    submit = inspect.getsource(kazoo_connection.ConnectionHandler._submit)
    assert "request.serialize()" in submit
    send = inspect.getsource(kazoo_connection.ConnectionHandler._send_request)
    assert "self._submit(request" in send
    event = inspect.getsource(kazoo_connection.ConnectionHandler._read_watch_event)
    assert "client._data_watchers.pop(path" in event
    response = inspect.getsource(kazoo_connection.ConnectionHandler._read_response)
    assert "client.last_zxid = header.zxid" in response
