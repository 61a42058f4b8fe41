"""Reliability: a LightFlow run on PostgreSQL when the database goes away mid-run.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). While step ``write`` runs, the proxy resets
every connection and refuses new ones, as a server restart does. The step's commit
cannot land, so the run stops with a typed ``StorageError`` and nothing starts on top
of the uncommitted step. Once the database is back, ``resume`` finishes the run without
running the committed step again.
"""

from __future__ import annotations

import socket
import threading
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
from lightagent.errors import StorageError
from lightagent_flow import LightFlow, SqlLightFlowStore

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


def test_a_run_stopped_by_an_outage_resumes_without_repeating_committed_steps(
    postgres_url, recorder
):
    parts = urlsplit(postgres_url)
    proxy = OutageProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    store = SqlLightFlowStore(_through(proxy, postgres_url))
    run_id = f"outage-{uuid.uuid4().hex[:10]}"
    writes: list[str] = []

    def write(query: str) -> str:
        writes.append(query)
        if len(writes) == 1:
            proxy.down()  # the database restarts while this step runs
        return "essay"

    flow = (
        LightFlow(store=store, retry_backoff=0)
        .step("research", agent=recorder.agent("research", "facts"))
        .step("write", agent=write, depends_on=["research"])
        .step("polish", agent=recorder.agent("polish", "final"), depends_on=["write"])
    )
    try:
        with pytest.raises(StorageError) as info:
            flow.run("q", run_id=run_id)
        assert info.value.code.startswith("LA-STORAGE"), info.value
        assert recorder.count("polish") == 0  # nothing ran on top of an uncommitted step
        proxy.up()
        result = flow.resume(run_id)
        assert result.success and result.content == "final", (result.status, result.error)
        assert recorder.count("research") == 1  # committed before the outage: never again
        assert len(writes) == 2  # the step in flight runs at most twice
        assert recorder.count("polish") == 1
        assert flow.get_run(run_id)["status"] == "success"
    finally:
        store.close()
        proxy.close()
