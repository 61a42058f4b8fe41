"""Reliability: a LightDAG worker behind a half-open network stops itself in time.

A half-open connection (packets silently dropped, no reset) does not fail a database
call: it hangs. A worker whose lease renewal hangs must still stop its attempt at its
own local deadline, before the lease can have expired and another worker taken over,
and publish nothing. The worker reaches PostgreSQL through a small TCP proxy on
127.0.0.1 that the test turns into a black hole (toxiproxy is not packaged here).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
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

pytestmark = [pytest.mark.postgres]

WAIT = 30.0  # generous bound for what should take about one lease


class BlackholeProxy:
    """A TCP forwarder to ``upstream`` that can silently drop everything (no RST)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.blackholed = threading.Event()
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._socks += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if not self.blackholed.is_set():
                    dst.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        """Reset everything: calls hanging on the black hole fail and return."""
        for sock in [self._listener, *self._socks]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def _through(proxy: BlackholeProxy, url: str) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@127.0.0.1:{proxy.port}" if userinfo else f"127.0.0.1:{proxy.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def test_a_worker_whose_renewals_hang_fences_itself_and_publishes_nothing(
    postgres_url, run_id, security, tmp_path
):
    parts = urlsplit(postgres_url)
    proxy = BlackholeProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    store_a = SqlTaskGraphStore(_through(proxy, postgres_url))
    store_b = SqlTaskGraphStore(postgres_url)
    released = threading.Event()
    calls: list[str] = []

    def work(context):
        calls.append(context.worker_id)
        if context.worker_id == "A":
            proxy.blackholed.set()  # mid-work, nothing A sends gets an answer any more
            released.wait(WAIT)  # long work, past the lease
        return TaskOutcome.candidate(f"from-{context.worker_id}")

    lease = 0.6
    cfg = DAGConfig(
        task_lease_seconds=lease,
        heartbeat_interval=0.15,
        poll_interval=0.01,
        poll_interval_max=0.05,
    )
    verifiers = {"v": CallableVerifier("v", lambda request: True)}
    artifacts = LocalArtifactStore(tmp_path / "art")
    dag_a = LightDAG(store=store_a, artifact_store=artifacts, verifiers=verifiers, config=cfg)
    dag_b = LightDAG(store=store_b, artifact_store=artifacts, verifiers=verifiers, config=cfg)
    for dag in (dag_a, dag_b):
        dag.register_worker("w", work)
    spec = TaskSpec(
        task_id="t1", goal="g", acceptance_contract={"x": 1}, worker_key="w", verifier_key="v"
    )
    dag_b.create_run([spec], run_id=run_id, context=security())
    outcomes: list[str] = []
    fenced_after: list[float] = []

    async def scenario() -> None:
        claim = await asyncio.to_thread(store_a.claim, "A", run_id=run_id, lease_seconds=lease)
        assert claim is not None
        fenced = asyncio.Event()

        def on_attempt(what: str, _claim: object) -> None:
            outcomes.append(what)
            if what == "fenced":
                fenced.set()

        runner_a = dag_a.runner(worker_id="A", on_attempt=on_attempt)
        start = time.monotonic()
        attempt_a = asyncio.create_task(runner_a.run_attempt(claim))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(fenced.wait(), WAIT)
        fenced_after.append(time.monotonic() - start)
        proxy.close()  # heal by reset, so that hanging calls return
        released.set()
        await asyncio.wait_for(attempt_a, WAIT)
        await asyncio.wait_for(dag_b.runner(worker_id="B").pool(run_id=run_id), WAIT)

    try:
        asyncio.run(scenario())
        # A stopped itself on its own clock, although no renewal ever came back.
        assert outcomes == ["started", "fenced"], (outcomes, fenced_after)
        # About 0.9 lease after its last renewal; the bound leaves a wide margin for load.
        assert fenced_after[0] < 10 * lease, fenced_after
        # A published nothing; B, which took over, did.
        assert dag_b.read_artifact(run_id, "t1") == b"from-B"
        assert store_b.publication_counts(run_id) == {"t1": 1}
        assert calls == ["A", "B"]
        assert [
            e for e in store_b.events(run_id, limit=1000) if e.type == "dag.attempt.fenced"
        ] == []
    finally:
        released.set()
        proxy.close()
        store_a.close()
        store_b.close()
