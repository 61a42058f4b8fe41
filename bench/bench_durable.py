"""One durable session append, next to the raw driver doing one ``INSERT`` + ``COMMIT``.

A run makes each event durable before it goes on, so the cost that matters is one append
of one event to a session that already holds N events. At each N, appends of the store
and of the floor alternate one by one (so the disk's and the machine's load hit both
alike), and the medians are compared:

* SQLite: ``SqliteSessionStore`` (WAL, ``synchronous=FULL``) against raw ``sqlite3`` on
  another file with the same settings;
* PostgreSQL (when one answers on 127.0.0.1:5432): ``SqlSessionStore`` against raw
  ``psycopg`` on its own connection, each in its own fresh database.

The store's append is the whole contract: the session row read and bumped under the
write lock (the ``expected_sequence`` check), redaction, the event row, the commit.
Run: ``.venv/bin/python bench/bench_durable.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = (100, 1_000, 10_000)
PROBE = 120  # appends timed at each size, per side
PAYLOAD = {"role": "assistant", "content": "A short answer about the weather. " * 4}
ADMIN = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _sqlite_floor(path: Path) -> tuple[Callable[[int], None], Callable[[int], None]]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE e (session TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (session, seq))"
    )
    text = json.dumps(PAYLOAD)
    state = {"seq": 0}

    def fill(size: int) -> None:
        db.execute("BEGIN")
        while state["seq"] < size:
            state["seq"] += 1
            db.execute("INSERT INTO e VALUES ('s', ?, ?)", (state["seq"], text))
        db.execute("COMMIT")

    def one(_: int) -> None:
        state["seq"] += 1
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO e VALUES ('s', ?, ?)", (state["seq"], text))
        db.execute("COMMIT")

    return fill, one


def _postgres_floor(url: str) -> tuple[Callable[[int], None], Callable[[int], None]]:
    import psycopg

    db = psycopg.connect(url, autocommit=True)
    db.execute(
        "CREATE TABLE e (session TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (session, seq))"
    )
    text = json.dumps(PAYLOAD)
    state = {"seq": 0}

    def fill(size: int) -> None:
        with db.transaction(), db.cursor() as cur:
            rows = [("s", n, text) for n in range(state["seq"] + 1, size + 1)]
            cur.executemany("INSERT INTO e VALUES (%s, %s, %s)", rows)
        state["seq"] = max(state["seq"], size)

    def one(_: int) -> None:
        state["seq"] += 1
        with db.transaction():
            db.execute("INSERT INTO e VALUES (%s, %s, %s)", ("s", state["seq"], text))

    return fill, one


def _store_side(store: object) -> tuple[Callable[[int], None], Callable[[int], None]]:
    state = {"seq": 0}

    def fill(size: int) -> None:
        while state["seq"] < size:
            n = min(1000, size - state["seq"])
            batch = [{"type": "assistant.completed", "data": PAYLOAD}] * n
            store.append("s", batch, expected_sequence=state["seq"])  # type: ignore[attr-defined]
            state["seq"] += n

    def one(_: int) -> None:
        store.append(  # type: ignore[attr-defined]
            "s", [{"type": "assistant.completed", "data": PAYLOAD}], expected_sequence=state["seq"]
        )
        state["seq"] += 1

    return fill, one


def _measure(floor: tuple, ours: tuple) -> dict[int, tuple[float, float]]:
    out = {}
    clock = time.perf_counter
    for size in SIZES:
        floor[0](size)
        ours[0](size)
        samples: tuple[list[float], list[float]] = ([], [])
        for i in range(PROBE):
            for k in (0, 1) if i % 2 == 0 else (1, 0):
                side = (floor, ours)[k]
                start = clock()
                side[1](i)
                samples[k].append(clock() - start)
        out[size] = (statistics.median(samples[0]) * 1000, statistics.median(samples[1]) * 1000)
    return out


def _postgres_database() -> str | None:
    try:
        import psycopg
    except ImportError:
        return None
    name = f"la_bench_durable_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(ADMIN, autocommit=True, connect_timeout=2) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception:
        return None
    return name


def _drop(name: str) -> None:
    import psycopg

    with psycopg.connect(ADMIN, autocommit=True, connect_timeout=2) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    from lightagent import SqliteSessionStore, SqlSessionStore

    rows: list[tuple[str, dict[int, tuple[float, float]] | str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteSessionStore(Path(tmp) / "s.sqlite3")
        rows.append(("SQLite: SqliteSessionStore / raw sqlite3", _measure(
            _sqlite_floor(Path(tmp) / "raw.sqlite3"), _store_side(store))))  # fmt: skip
        store.close()
    floor_db, store_db = _postgres_database(), _postgres_database()
    if floor_db and store_db:
        base = ADMIN.rsplit("/", 1)[0]
        pg = SqlSessionStore(f"{base.replace('postgresql://', 'postgresql+psycopg://')}/{store_db}")
        try:
            rows.append(("PostgreSQL: SqlSessionStore / raw psycopg", _measure(
                _postgres_floor(f"{base}/{floor_db}"), _store_side(pg))))  # fmt: skip
        finally:
            pg.close()
            _drop(floor_db)
            _drop(store_db)
    else:
        rows.append(("PostgreSQL", "not measured: no server answered on 127.0.0.1:5432"))
    import psycopg

    head = " | ".join(f"{n:,} events" for n in SIZES)
    lines = [
        "## Durable session appends against the raw driver\n",
        f"`bench/bench_durable.py` — median ms for one durable append of one event to a session "
        f"already holding N events, {PROBE} appends per side at each N, the store's and the raw "
        "driver's alternating one by one; the raw driver does one `INSERT` + `COMMIT` with the same "
        "durability (SQLite: WAL, `synchronous=FULL`). Cells: store ms / raw ms (**ratio**); "
        f"the goal is 2.0x or less. Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, "
        f"psycopg {psycopg.__version__}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} when it ended.\n",
        f"| store / floor | {head} |",
        "|---|" + "---:|" * len(SIZES),
    ]
    for label, res in rows:
        if isinstance(res, str):
            lines.append(f"| {label} | {res} |" + " |" * (len(SIZES) - 1))
            continue
        cells = [
            f"{res[n][1]:.2f} / {res[n][0]:.2f} (**{res[n][1] / res[n][0]:.2f}x**)" for n in SIZES
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "durable.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
