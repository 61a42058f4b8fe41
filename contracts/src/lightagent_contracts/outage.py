"""A database outage on demand: a TCP forwarder on 127.0.0.1 that a test can take down.

``OutageProxy(upstream)`` forwards connections to ``upstream``; :meth:`~OutageProxy.down`
resets every open connection and refuses new ones, as a server restart does, and
:meth:`~OutageProxy.up` accepts them again on the same port. The ``postgres_outage``
fixture puts one in front of the test PostgreSQL; a store built on
``postgres_outage.route(postgres_url)`` sees the outages.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

__all__ = ["OutageProxy", "postgres_outage"]


class OutageProxy:
    """A TCP forwarder to ``upstream`` that can drop every connection and refuse new ones."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.up()

    def route(self, url: str) -> str:
        """``url`` with its host and port replaced by this proxy's."""
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        host = f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}" if userinfo else host))

    def up(self) -> None:
        """Accept connections (again) on the same port."""
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
            _shut(conn)
            conn.close()

    def close(self) -> None:
        """Stop forwarding for good."""
        self.down()

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
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    _shut(src)
    _shut(dst)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


@pytest.fixture
def postgres_outage(postgres_url: str) -> Iterator[OutageProxy]:
    """An :class:`OutageProxy` in front of the test PostgreSQL (``route(postgres_url)``)."""
    parts = urlsplit(postgres_url)
    proxy = OutageProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        yield proxy
    finally:
        proxy.close()
