"""Reliability: the PostgreSQL session store through a database outage.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). "Down" closes every open connection and
refuses new ones, as a server restart does; "up" accepts them again. While the database
is down every call gives a typed ``StorageError``; once it is back the same store object
goes on, with every acknowledged event kept once and in order.
"""

from __future__ import annotations

import socket
import threading
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
from lightagent.errors import StorageError
from lightagent.events.sql_store import SqlSessionStore

pytestmark = [pytest.mark.postgres]


class OutageProxy:
    """A TCP forwarder to ``upstream`` that can drop every connection and refuse new ones."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.up()

    def up(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and reset every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
            except OSError:
                pass
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._conns += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.down()


def _through(proxy: OutageProxy, url: str) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@127.0.0.1:{proxy.port}" if userinfo else f"127.0.0.1:{proxy.port}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
def proxy(postgres_url):
    parts = urlsplit(postgres_url)
    outage = OutageProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        yield outage
    finally:
        outage.close()


def test_session_store_gives_typed_errors_while_down_and_goes_on_after(postgres_url, proxy):
    store = SqlSessionStore(_through(proxy, postgres_url), table_prefix=f"o{uuid.uuid4().hex[:8]}_")
    try:
        acked = [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 0}}])]
        acked += [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 1}}])]
        proxy.down()
        calls = {
            "append": lambda: store.append("s", [{"type": "n.e", "data": {"i": -1}}]),
            "events": lambda: store.events("s"),
            "last_sequence": lambda: store.last_sequence("s"),
            "list_sessions": lambda: store.list_sessions(),
        }
        for name, call in calls.items():
            with pytest.raises(StorageError) as info:
                call()
            assert info.value.code == "LA-STORAGE-UNAVAILABLE", (name, info.value)
            assert info.value.hint, name
        proxy.up()
        acked += [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 2}}])]
        events = store.events("s")
        assert [e.sequence for e in events] == [1, 2, 3] == acked
        assert [e.data["i"] for e in events] == [0, 1, 2]
    finally:
        store.close()
