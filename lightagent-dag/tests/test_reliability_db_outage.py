"""Reliability: LightDAG on PostgreSQL through a database outage in the middle of a run.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). While a task runs, the proxy resets every
connection and refuses new ones for a second, as a server restart does. The run must
finish on its own once the database is back: every task verified, exactly one published
artifact per task, and no exception out of ``run``.
"""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit, urlunsplit

import pytest
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    LightDAG,
    LocalArtifactStore,
    SqlTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


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


def _through(proxy: OutageProxy, url: str) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@127.0.0.1:{proxy.port}" if userinfo else f"127.0.0.1:{proxy.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def test_a_run_survives_a_database_outage_mid_run(postgres_url, run_id, security, tmp_path):
    parts = urlsplit(postgres_url)
    proxy = OutageProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    store = SqlTaskGraphStore(_through(proxy, postgres_url))
    outages: list[threading.Timer] = []

    def work(ctx):
        if ctx.task_id == "t3" and not outages:
            proxy.down()
            outages.append(threading.Timer(1.0, proxy.up))
            outages[0].start()
        return TaskOutcome.candidate(f"out-{ctx.task_id}")

    cfg = DAGConfig(
        task_lease_seconds=2.0,
        heartbeat_interval=0.5,
        poll_interval=0.01,
        poll_interval_max=0.2,
        retry_backoff_seconds=0.01,
        max_attempts_per_task=10,
    )
    dag = LightDAG(
        store=store,
        artifact_store=LocalArtifactStore(tmp_path / "art"),
        verifiers={"v": CallableVerifier("v", lambda request: True)},
        config=cfg,
    )
    dag.register_worker("w", work)
    ids = [f"t{i}" for i in range(8)]
    specs = [
        TaskSpec(
            task_id=t, goal="g", acceptance_contract={"t": t}, worker_key="w", verifier_key="v"
        )
        for t in ids
    ]
    try:
        dag.create_run(specs, run_id=run_id, context=security())
        result = dag.run(run_id, concurrency=4)
        assert outages, "the outage never happened"
        outages[0].join(30)
        assert result.success, (result.status, result.errors)
        assert store.publication_counts(run_id) == dict.fromkeys(ids, 1)
        assert {t: dag.read_artifact(run_id, t) for t in ids} == {
            t: f"out-{t}".encode() for t in ids
        }
    finally:
        for timer in outages:
            timer.cancel()
        store.close()
        proxy.close()
