"""Durable single appends: lightagent's SQLite session store next to PyPI ``lightagent==0.11.0``'s.

A run makes each event durable before it goes on, so the cost that matters is one append
of one event to a session that already holds many. The 0.11.0 store saves a session by
rewriting all of its events; ours appends one row. Both are measured at growing session
sizes, next to raw ``sqlite3`` (one ``INSERT`` + ``COMMIT`` per event, WAL,
``synchronous=FULL``: the floor). The 0.11.0 store runs in ``bench/.work/venv-la011``
(installed on first run by ``bench/la011.py``).

Run: ``.venv/bin/python bench/bench_events_peer.py``.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from la011 import la011_python

HERE = Path(__file__).resolve().parent
SIZES = (100, 1000, 2000)
PROBE = 50  # appends timed at each size
PAYLOAD = {"role": "assistant", "content": "A short answer about the weather. " * 4}

OLD = r"""
import json, os, statistics, sys, tempfile, time
from LightAgent import SqliteSessionStore
sizes, probe, payload = json.loads(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
out = {}
with tempfile.TemporaryDirectory() as d:
    store = SqliteSessionStore(os.path.join(d, "s.sqlite3"))
    session = store.create()
    done = 0
    for size in sizes:
        while done < size:
            session.append("assistant.completed", payload); done += 1
        store.save(session)
        samples = []
        for _ in range(probe):
            t = time.perf_counter()
            session.append("assistant.completed", payload); store.save(session)
            samples.append(time.perf_counter() - t); done += 1
        out[size] = statistics.median(samples) * 1000
print(json.dumps(out))
"""


def _raw(size_list: tuple[int, ...]) -> dict[int, float]:
    out = {}
    with tempfile.TemporaryDirectory() as d:
        db = sqlite3.connect(Path(d) / "raw.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute(
            "CREATE TABLE e (session TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (session, seq))"
        )
        text = json.dumps(PAYLOAD)
        seq = 0
        for size in size_list:
            db.execute("BEGIN")
            while seq < size:
                seq += 1
                db.execute("INSERT INTO e VALUES ('s', ?, ?)", (seq, text))
            db.execute("COMMIT")
            samples = []
            for _ in range(PROBE):
                seq += 1
                t = time.perf_counter()
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO e VALUES ('s', ?, ?)", (seq, text))
                db.execute("COMMIT")
                samples.append(time.perf_counter() - t)
            out[size] = statistics.median(samples) * 1000
        db.close()
    return out


def _ours(size_list: tuple[int, ...]) -> dict[int, float]:
    from lightagent import SqliteSessionStore

    out = {}
    with tempfile.TemporaryDirectory() as d:
        store = SqliteSessionStore(Path(d) / "s.sqlite3")
        seq = 0
        for size in size_list:
            batch = []
            while seq + len(batch) < size:
                batch.append({"type": "assistant.completed", "data": PAYLOAD})
            if batch:
                store.append("s", batch, expected_sequence=seq)
                seq += len(batch)
            samples = []
            for _ in range(PROBE):
                t = time.perf_counter()
                store.append(
                    "s", [{"type": "assistant.completed", "data": PAYLOAD}], expected_sequence=seq
                )
                samples.append(time.perf_counter() - t)
                seq += 1
            out[size] = statistics.median(samples) * 1000
    return out


def main() -> None:
    rows = {"raw sqlite3 (floor)": _raw(SIZES), "lightagent SqliteSessionStore": _ours(SIZES)}
    python = la011_python()
    if python:
        proc = subprocess.run(
            [python, "-c", OLD, json.dumps(SIZES), str(PROBE), json.dumps(PAYLOAD)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode == 0:
            rows["LightAgent 0.11.0 SqliteSessionStore"] = {
                int(k): v for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()
            }
        else:
            rows["LightAgent 0.11.0 SqliteSessionStore"] = proc.stderr.strip()[-200:]
    else:
        rows["LightAgent 0.11.0 SqliteSessionStore"] = "not measured: installing 0.11.0 failed"
    floor = rows["raw sqlite3 (floor)"]
    head = " | ".join(f"{n:,} events" for n in SIZES)
    lines = [
        "## Durable single appends next to LightAgent 0.11.0\n",
        f"Median ms for one durable append of one event to a session already holding N events "
        f"({PROBE} appends timed at each N; `bench/bench_events_peer.py`), and the ratio to raw "
        "`sqlite3` (WAL, `synchronous=FULL`).\n",
        f"| store | {head} |",
        "|---|" + "---:|" * len(SIZES),
    ]
    for label, res in rows.items():
        if isinstance(res, str):
            lines.append(f"| {label} | {res} |" + " |" * (len(SIZES) - 1))
            continue
        cells = [f"{res[n]:.2f} ms ({res[n] / floor[n]:.1f}x)" for n in SIZES]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "events_peer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
