"""Session store throughput: appends and replay of N events per store, next to raw ``sqlite3``.

What is measured, for each store (in-memory, JSONL, SQLite through SQLAlchemy, and
PostgreSQL when one answers on 127.0.0.1:5432):

* ``single``: appends of one event each, with ``expected_sequence`` (what a run does:
  each trace event is durable before the loop goes on). Durable: fsync per append for
  JSONL, ``synchronous=FULL`` commits for SQLite.
* ``batch``: appends of 100 events each.
* ``replay``: read every event back (``iter_events``) and fold ``SessionManager.replay``.
* ``late/early``: mean latency of the last 1,000 single appends over the first 1,000
  — about 1.0 means O(1) per append (the seeds' store rewrote the session on every event).

The floor is raw ``sqlite3`` doing the same work on the same payload text: one
``INSERT`` + ``COMMIT`` per event (``single``), 100 per commit (``batch``), one
``SELECT`` + ``json.loads`` per row (``replay``), with the same WAL and synchronous
settings. Figures are ratios to that floor (lower is better; 1.0 = as fast as raw sqlite3).

Run: ``.venv/bin/python bench/bench_events.py [--events 100000] [--single 3000] [--rounds 2]``.
Single appends default to 3,000 per store (each is an fsync: ~3 ms on this disk) to keep the run under ~2 minutes; the
table says which counts were used.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lightagent-core" / "src"))

from lightagent.events.jsonl_store import JsonlSessionStore  # noqa: E402
from lightagent.events.manager import SessionManager  # noqa: E402
from lightagent.events.memory_store import InMemorySessionStore  # noqa: E402
from lightagent.events.model import SessionEvent  # noqa: E402
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore  # noqa: E402
from lightagent.events.store import dumps_event  # noqa: E402

PG_URL = os.environ.get(
    "LIGHTAGENT_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
BATCH = 100


def make_event(i: int) -> SessionEvent:
    """A realistic small event: a tool result of a run."""
    return SessionEvent(
        "tool.completed",
        data={
            "call_id": f"call_{i}",
            "name": "lookup",
            "output": f"result number {i} " * 4,
            "error": None,
        },
        run_id="run_bench",
        turn_id="run_bench",
    )


def payload_of(i: int) -> str:
    event = make_event(i)
    event.sequence = i + 1
    event.session_id = "bench"
    return dumps_event(event)


# -- the floor -------------------------------------------------------------------------


def raw_sqlite(path: str, n_single: int, n_batch: int) -> dict[str, float]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE ev (sid TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (sid, seq))")
    payloads = [payload_of(i) for i in range(max(n_single, n_batch))]
    lat: list[float] = []
    t0 = time.perf_counter()
    for i in range(n_single):
        s = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO ev VALUES (?, ?, ?)", ("single", i + 1, payloads[i]))
        db.execute("COMMIT")
        lat.append(time.perf_counter() - s)
    single = time.perf_counter() - t0
    t0 = time.perf_counter()
    for start in range(0, n_batch, BATCH):
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO ev VALUES (?, ?, ?)",
            [("batch", i + 1, payloads[i]) for i in range(start, min(n_batch, start + BATCH))],
        )
        db.execute("COMMIT")
    batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    count = sum(
        1
        for (p,) in db.execute("SELECT payload FROM ev WHERE sid = 'batch' ORDER BY seq")
        if json.loads(p)
    )
    replay = time.perf_counter() - t0
    assert count == n_batch
    db.close()
    return {"single": single, "batch": batch, "replay": replay, "late_early": _late_early(lat)}


def _late_early(lat: list[float]) -> float:
    k = min(1000, len(lat) // 4) or 1
    return statistics.fmean(lat[-k:]) / statistics.fmean(lat[:k])


# -- our stores ------------------------------------------------------------------------


def bench_store(make: Callable[[], object], n_single: int, n_batch: int) -> dict[str, float]:
    store = make()
    sid_single, sid_batch = f"single-{uuid.uuid4().hex[:6]}", f"batch-{uuid.uuid4().hex[:6]}"
    events = [make_event(i) for i in range(max(n_single, n_batch))]
    lat: list[float] = []
    t0 = time.perf_counter()
    for i in range(n_single):
        s = time.perf_counter()
        store.append(sid_single, [events[i]], expected_sequence=i)
        lat.append(time.perf_counter() - s)
    single = time.perf_counter() - t0
    t0 = time.perf_counter()
    for start in range(0, n_batch, BATCH):
        store.append(sid_batch, events[start : start + BATCH], expected_sequence=start)
    batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    replay = SessionManager(store).replay(sid_batch)
    replay_time = time.perf_counter() - t0
    assert replay.event_count == n_batch, replay
    store.close()
    return {"single": single, "batch": batch, "replay": replay_time, "late_early": _late_early(lat)}


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_URL.replace("+psycopg", ""), connect_timeout=2):
            return True
    except Exception:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events", type=int, default=100_000, help="events for batch appends and replay"
    )
    parser.add_argument("--single", type=int, default=3_000, help="single-event appends per store")
    parser.add_argument(
        "--pg-scale", type=float, default=0.25, help="fraction of the counts used on PostgreSQL"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds; medians are reported")
    args = parser.parse_args()
    n, n1 = args.events, args.single
    pg = postgres_available()
    pn1, pn = int(n1 * args.pg_scale), int(n * args.pg_scale)
    # Rounds interleave the floor and every store, so drift in the shared disk's fsync
    # latency hits all of them alike; each figure is the median over the rounds.
    results: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        work = Path(
            tempfile.mkdtemp(prefix="bench-events-", dir=HERE if os.access(HERE, os.W_OK) else None)
        )
        try:
            cases: list[tuple[str, Callable[[], dict[str, float]]]] = [
                ("raw sqlite3 (floor)", lambda w=work: raw_sqlite(str(w / "raw.db"), n1, n)),
                ("InMemorySessionStore", lambda: bench_store(InMemorySessionStore, n1, n)),
                (
                    "JsonlSessionStore (fsync)",
                    lambda w=work: bench_store(lambda: JsonlSessionStore(w / "jsonl"), n1, n),
                ),
                (
                    "SqliteSessionStore (FULL)",
                    lambda w=work: bench_store(lambda: SqliteSessionStore(w / "s.db"), n1, n),
                ),
            ]
            for name, case in cases:
                results.setdefault(name, []).append(case())
            if pg:
                prefix = f"bench{uuid.uuid4().hex[:6]}_"
                try:
                    results.setdefault("SqlSessionStore (PostgreSQL)", []).append(
                        bench_store(
                            lambda p=prefix: SqlSessionStore(PG_URL, table_prefix=p), pn1, pn
                        )
                    )
                finally:
                    _drop_pg(prefix)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    rows = []
    for name, runs in results.items():
        med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        counts = (pn1, pn) if "PostgreSQL" in name else (n1, n)
        rows.append((name, *counts, med))
    write(rows, rows[0][3], n1, n, args.rounds)


def _drop_pg(prefix: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {prefix}session_events, {prefix}sessions")


def write(
    rows: list[tuple[str, int, int, dict[str, float]]],
    floor: dict[str, float],
    n1: int,
    n: int,
    rounds: int,
) -> None:
    def per_sec(count: int, seconds: float) -> str:
        return f"{count / seconds:,.0f}/s" if seconds else "-"

    lines = [
        "# Session event stores",
        "",
        f"`bench/bench_events.py` — {n1:,} single-event appends and {n:,} events in batches of {BATCH} per store,",
        "then a full replay of the batched session. Ratios are to raw `sqlite3` on the same payloads",
        "per event (lower is better). `late/early` is the mean latency of the last 1,000 single appends",
        "over the first 1,000: about 1.0 means O(1) per append.",
        f"Medians of {rounds} interleaved rounds. Python {sys.version.split()[0]}, "
        f"SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs (shared with other work: fsync",
        "latency on this disk varies several-fold between runs, which moves the single-append column).",
        "",
        "| store | single appends | x floor | batched appends | x floor | replay | x floor | late/early |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def ratio(r: dict[str, float], key: str, count: int, base_count: int) -> float:
        return (r[key] / count) / (floor[key] / base_count)

    for name, c1, c, r in rows:
        lines.append(
            f"| {name} ({c1:,} / {c:,}) | {per_sec(c1, r['single'])} | {ratio(r, 'single', c1, n1):.2f} "
            f"| {per_sec(c, r['batch'])} | {ratio(r, 'batch', c, n):.2f} "
            f"| {r['replay']:.2f}s | {ratio(r, 'replay', c, n):.2f} | {r['late_early']:.2f} |"
        )
    lines += [
        "",
        "The seeds' `SqliteSessionStore` (PyPI `lightagent==0.11.0`) rewrites the whole session on",
        "every event (O(n) per append, O(n²) per session); `bench/bench_events_peer.py` measures it",
        "next to this store (see its table).",
        "",
    ]
    text = "\n".join(lines)
    out = HERE / "results" / "events.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
