"""Benchmark of lightagent-rag-fts: ingest chunks/s and search p50/p99 against the raw drivers.

Run: ``.venv/bin/python bench/bench_rag.py`` (sizes from ``BENCH_RAG_SIZES``, default
``10000``; ``10000,100000`` for the full table, several minutes). Writes
bench/results/rag.md. Not part of ``make bench`` (filling 100k chunks is slow).

For each size, the same synthetic documents (one chunk each, about 300 characters) go
into our provider and into a raw floor doing the same work by hand: a raw ``sqlite3``
FTS5 table (``executemany`` in one transaction per batch, ``bm25`` with the same title
weight), and a raw PostgreSQL table with a GIN-indexed ``tsvector`` (``ts_rank_cd``).
Then the same queries (three words, tenant-filtered) are timed on each, interleaved.
PostgreSQL is measured when ``LIGHTAGENT_TEST_POSTGRES`` answers.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from lightagent_rag_fts import (
    PostgresFTSRetrievalProvider,
    RetrievalDocument,
    SqliteFTSRetrievalProvider,
)

RESULTS = Path(__file__).parent / "results" / "rag.md"
SIZES = [int(s) for s in os.environ.get("BENCH_RAG_SIZES", "10000").split(",") if s]
QUERIES = int(os.environ.get("BENCH_RAG_QUERIES", "300"))
BATCH = 1000
TENANTS = 10
PG_URL = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")

random.seed(7)
WORDS = [f"w{i:04d}" for i in range(5000)] + [
    "release", "deploy", "invoice", "budget", "coffee", "tea", "report", "meeting",
]  # fmt: skip


def _docs(n: int) -> list[RetrievalDocument]:
    rng = random.Random(n)
    return [
        RetrievalDocument(
            " ".join(rng.choice(WORDS) for _ in range(40)) + ".",
            title=" ".join(rng.choice(WORDS) for _ in range(3)),
            document_id=f"d{i}",
            tenant_id=f"t{i % TENANTS}",
        )
        for i in range(n)
    ]


def _queries() -> list[tuple[str, str]]:
    rng = random.Random(1)
    return [
        (" ".join(rng.choice(WORDS) for _ in range(3)), f"t{rng.randrange(TENANTS)}")
        for _ in range(QUERIES)
    ]


class RawSqlite:
    """The floor: an FTS5 table and a column table, filled and searched by hand."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, tenant TEXT, content TEXT)")
        self.conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, body)")

    def ingest(self, docs: list[RetrievalDocument], first: int) -> None:
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        cur.executemany(
            "INSERT INTO c VALUES (?, ?, ?)",
            [(first + i, d.tenant_id, d.content) for i, d in enumerate(docs)],
        )
        cur.executemany(
            "INSERT INTO f (rowid, title, body) VALUES (?, ?, ?)",
            [(first + i, d.title, d.content) for i, d in enumerate(docs)],
        )
        cur.execute("COMMIT")

    def search(self, query: str, tenant: str) -> list[Any]:
        match = " OR ".join(f'"{w}"' for w in query.split())
        return self.conn.execute(
            "SELECT c.id, c.content, -bm25(f, 3.0, 1.0) AS s FROM f JOIN c ON c.id = f.rowid "
            "WHERE f MATCH ? AND c.tenant = ? ORDER BY s DESC LIMIT 5",
            (match, tenant),
        ).fetchall()


class RawPostgres:
    """The floor on PostgreSQL: one table with a GIN-indexed tsvector, by hand."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.table = f"bench_raw_{uuid.uuid4().hex[:8]}"
        self.conn.execute(
            f"CREATE TABLE {self.table} (id BIGINT PRIMARY KEY, tenant TEXT, content TEXT, tsv TSVECTOR)"
        )
        self.conn.execute(f"CREATE INDEX ON {self.table} USING GIN (tsv)")

    def ingest(self, docs: list[RetrievalDocument], first: int) -> None:
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {self.table} VALUES (%s, %s, %s, setweight(to_tsvector('simple', %s), 'A') "
                "|| setweight(to_tsvector('simple', %s), 'B'))",
                [
                    (first + i, d.tenant_id, d.content, d.title, d.content)
                    for i, d in enumerate(docs)
                ],
            )

    def search(self, query: str, tenant: str) -> list[Any]:
        expression = " | ".join(f"'{w}'" for w in query.split())
        return self.conn.execute(
            f"SELECT id, content, ts_rank_cd(tsv, q) AS s FROM {self.table}, "
            "to_tsquery('simple', %s) q WHERE tsv @@ q AND tenant = %s ORDER BY s DESC LIMIT 5",
            (expression, tenant),
        ).fetchall()

    def close(self) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _measure(name: str, ours: Any, raw: Any, n: int) -> list[str]:
    docs = _docs(n)
    t_ours = t_raw = 0.0
    for start in range(0, n, BATCH):
        batch = docs[start : start + BATCH]
        t0 = time.perf_counter()
        ours.ingest(batch)
        t1 = time.perf_counter()
        raw.ingest(batch, start + 1)
        t_raw += time.perf_counter() - t1
        t_ours += t1 - t0
    lat_ours: list[float] = []
    lat_raw: list[float] = []
    hits = 0
    for query, tenant in _queries():
        t0 = time.perf_counter()
        hits += len(ours.search(query, limit=5, tenant_id=tenant))
        t1 = time.perf_counter()
        raw.search(query, tenant)
        lat_raw.append(time.perf_counter() - t1)
        lat_ours.append(t1 - t0)
    p50o, p99o, p50r, p99r = (
        _pct(lat_ours, 0.5), _pct(lat_ours, 0.99), _pct(lat_raw, 0.5), _pct(lat_raw, 0.99),
    )  # fmt: skip
    return [
        f"| {name} | {n:,} | {n / t_ours:,.0f} | {n / t_raw:,.0f} | {t_ours / t_raw:.2f} "
        f"| {p50o:.2f} / {p99o:.2f} | {p50r:.2f} / {p99r:.2f} | {p50o / p50r:.2f} | {hits / QUERIES:.1f} |"
    ]


def main() -> int:
    rows = []
    for n in SIZES:
        with tempfile.TemporaryDirectory() as folder:
            ours = SqliteFTSRetrievalProvider(Path(folder) / "ours.db")
            raw = RawSqlite(str(Path(folder) / "raw.db"))
            rows += _measure("SQLite FTS5", ours, raw, n)
            ours.close()
            raw.conn.close()
        print(rows[-1], flush=True)
        try:
            pg_raw = RawPostgres(PG_URL)
        except Exception as exc:
            print(f"PostgreSQL skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        pg = PostgresFTSRetrievalProvider(PG_URL, table=f"bench_rag_{uuid.uuid4().hex[:8]}")
        try:
            rows += _measure("PostgreSQL", pg, pg_raw, n)
        finally:
            with pg._tx(write=True) as cur:
                cur.execute(f"DROP TABLE IF EXISTS {pg.table}_chunks, {pg.table}_documents")
            pg.close()
            pg_raw.close()
        print(rows[-1], flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        "# Full-text retrieval against the raw drivers\n\n"
        "`bench/bench_rag.py`: synthetic one-chunk documents (40 words, 10 tenants), ingested in "
        f"batches of {BATCH}; {QUERIES} three-word queries filtered by tenant, limit 5. The raw "
        "floor does the same inserts and the same ranked, filtered query by hand (no chunking, "
        "no CJK segmentation, no replace-on-reingest, no tenant check; ours also searches words "
        "of 4+ letters as prefixes). Ratios are ours over raw; "
        "lower is better.\n\n"
        "| backend | chunks | ingest chunks/s (ours) | raw | time x raw | search p50 / p99 ms (ours) "
        "| raw | p50 x raw | hits/query |\n|---|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
