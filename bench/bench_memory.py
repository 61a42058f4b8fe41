"""Benchmark of memory in a run: what the agent adds to a backend's retrieve and store.

Run: ``.venv/bin/python bench/bench_memory.py`` (about a minute). Writes bench/results/memory.md.

Per backend, three things are timed, interleaved turn by turn so machine drift hits each
alike, on two identically filled backends:

- the floor: calling the backend directly, ``retrieve(query, user)`` then
  ``store(query, user)``, as one turn of memory costs at least;
- a run of a ``ScriptedModel`` agent **with** ``memory=`` (retrieve, policy, inject,
  admit, store, events);
- the same run **without** memory.

The memory overhead of a run is (with - without); the table gives it and its ratio to the
floor (1.00 = the agent adds nothing to the backend's own cost). PostgreSQL is measured
when ``LIGHTAGENT_TEST_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432/test``)
answers; mem0 runs against the loopback server's embeddings with Qdrant embedded.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="bench-mem0-"))
os.environ.setdefault("MEM0_TELEMETRY", "False")

from lightagent import InMemoryMemory, LightAgent, MemoryPolicy, ScriptedModel, SharedMemoryPool

RESULTS = Path(__file__).parent / "results" / "memory.md"
TURNS = int(os.environ.get("BENCH_MEMORY_TURNS", "300"))
FILL = 200  # memories per user before timing (in-process backends)
SQL_FILL = 25  # one commit per store: filling a database is slow, searching it is not
USERS = 20
TOPICS = ["reports", "travel", "invoices", "meetings", "coffee", "deadlines", "budgets", "weather"]


def _fill(memory: Any, policy: MemoryPolicy, fill: int) -> None:
    for i in range(fill * USERS):
        user = f"user-{i % USERS}"
        topic = TOPICS[i % len(TOPICS)]
        memory.store(
            f"note {i}: {user} said something about {topic} and item {i % 37}",
            policy.scoped_user_id(user),
            metadata={"source": "user", "scope": "user", "user_id": policy.scoped_user_id(user)},
        )


def _query(i: int) -> str:
    return f"What did I say about {TOPICS[i % len(TOPICS)]} and item {i % 37} today {i}?"


def measure(
    name: str,
    make: Callable[[], Any],
    policy: MemoryPolicy,
    *,
    turns: int = TURNS,
    fill: int = FILL,
) -> dict[str, Any]:
    direct, agent_memory = make(), make()
    _fill(direct, policy, fill)
    _fill(agent_memory, policy, fill)
    with_memory = LightAgent(
        model=ScriptedModel(default="ok"), memory=agent_memory, memory_policy=policy
    )
    without = LightAgent(model=ScriptedModel(default="ok"))
    for i in range(20):  # warm both paths up
        with_memory.run(_query(i), user_id=f"user-{i % USERS}")
        without.run(_query(i), user_id=f"user-{i % USERS}")
    floor, mem, bare = [], [], []
    for i in range(turns):
        user, query = f"user-{i % USERS}", _query(i)
        scoped = policy.scoped_user_id(user)
        t0 = time.perf_counter()
        direct.retrieve(query, scoped)
        direct.store(query, scoped, metadata={"source": "user", "scope": "user", "user_id": scoped})
        t1 = time.perf_counter()
        with_memory.run(query, user_id=user)
        t2 = time.perf_counter()
        without.run(query, user_id=user)
        t3 = time.perf_counter()
        floor.append(t1 - t0)
        mem.append(t2 - t1)
        bare.append(t3 - t2)
    for backend in (direct, agent_memory):
        closer = getattr(backend, "close", None)
        if callable(closer):
            closer()
    f, m, b = (statistics.median(x) * 1e6 for x in (floor, mem, bare))
    overhead = m - b
    return {
        "name": name,
        "floor_us": f,
        "run_us": m,
        "bare_us": b,
        "overhead_us": overhead,
        "ratio": overhead / f if f else float("nan"),
        "turns": turns,
        "fill": fill,
    }


class _Constant:
    """A backend that does no work: five attributed results, a store that keeps nothing."""

    def __init__(self) -> None:
        self.results: dict[str, Any] = {}

    def retrieve(self, query: str, user_id: str) -> dict[str, Any]:
        found = self.results.get(user_id)
        if found is None:
            meta = {"source": "user", "scope": "user", "user_id": user_id}
            found = self.results[user_id] = {
                "results": [
                    {
                        "memory": f"note {i}",
                        "user_id": user_id,
                        "metadata": meta,
                        "memory_id": str(i),
                    }
                    for i in range(5)
                ]
            }
        return found

    def store(self, data: Any, user_id: str, *, metadata: Any = None) -> dict[str, Any]:
        return {"stored": True, "memory_id": "m"}


def _postgres_url() -> str | None:
    url = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3):
            return url
    except Exception:
        return None


def main() -> int:
    policy = MemoryPolicy(namespace="bench")
    strict = MemoryPolicy(
        namespace="bench",
        allowed_sources=("user",),
        min_write_length=4,
        reject_duplicate_writes=True,
        reject_write_patterns=[r"\bSSN\b"],
    )
    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    rows = [
        measure("a backend that does nothing (the agent's own cost)", _Constant, policy, fill=0),
        measure("InMemoryMemory, default policy", InMemoryMemory, policy),
        measure(
            "InMemoryMemory, strict policy (filters, dedupe, patterns)", InMemoryMemory, strict
        ),
        measure("SharedMemoryPool, in memory", SharedMemoryPool, policy),
        measure(
            "SharedMemoryPool, SQLite file",
            lambda: SharedMemoryPool(f"sqlite:///{work / uuid.uuid4().hex}.db"),
            policy,
            fill=SQL_FILL,
        ),
    ]
    url = _postgres_url()
    if url is not None:
        rows.append(
            measure(
                "SharedMemoryPool, PostgreSQL",
                lambda: SharedMemoryPool(url, table=f"bench_{uuid.uuid4().hex[:10]}"),
                policy,
                turns=min(TURNS, 200),
                fill=SQL_FILL,
            )
        )
    rows.append(_mem0_row(policy))
    _write(rows, url is not None)
    for row in rows:
        print(f"{row['name']:<62} overhead {row['overhead_us']:8.1f} µs  ratio {row['ratio']:.2f}")
    return 0


def _mem0_row(policy: MemoryPolicy) -> dict[str, Any]:
    from lightagent_contracts import LoopbackServer
    from lightagent_memory_mem0 import Mem0Memory

    server = LoopbackServer(embedding_dimensions=64).start()
    try:

        def make() -> Any:
            return Mem0Memory(
                base_url=server.base_url, api_key="k", embedding_dims=64, infer=False, limit=5
            )

        # mem0's embedded Qdrant scans every point per search: a small fill
        return measure(
            "Mem0Memory (infer=False), embedded Qdrant, loopback embeddings",
            make,
            policy,
            turns=min(TURNS, 100),
            fill=10,
        )
    finally:
        server.stop()


def _write(rows: list[dict[str, Any]], postgres: bool) -> None:
    lines = [
        "# Memory benchmark",
        "",
        f"Python {platform.python_version()} on {platform.machine()}; `bench/bench_memory.py`; "
        f"medians of {TURNS} turns (fewer for PostgreSQL and mem0), {USERS} users, up to 5 "
        "results injected; the memories per user before timing are in the table.",
        "",
        "Floor: the backend called directly (`retrieve` then `store`, the least one turn of memory "
        "costs). Overhead: a `ScriptedModel` run with `memory=` minus the same run without. "
        "Ratio = overhead / floor: 1.00 means the agent adds nothing to the backend's own cost.",
        "",
        "| backend | memories per user | floor (µs) | run with memory (µs) | run without (µs) | memory overhead (µs) | overhead / floor |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['fill']} | {r['floor_us']:.1f} | {r['run_us']:.1f} | {r['bare_us']:.1f} | "
            f"{r['overhead_us']:.1f} | {r['ratio']:.2f} |"
        )
    lines += [
        "",
        "The first row is the agent's own cost per turn (its overhead over a backend that does "
        "nothing, whose floor is two method calls): that many µs is what the ratio of every "
        "other row is made of. What the agent adds per turn: the policy over each result (attribution, provenance, "
        "expiry, promotion), injecting the lines into the system prompt, the write's admission "
        "checks (length, credentials, patterns, duplicates), the provenance metadata, and the "
        "memory events. On the fast in-process backends that fixed cost dominates the ratio; on "
        "real stores (SQLite, PostgreSQL, mem0) the backend's own work does.",
    ]
    if not postgres:
        lines.append("\nPostgreSQL was not reachable: its row is missing.")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
