"""kill -9 during appends: every acknowledged event survives, in order, with no gap or
duplicate, and the next writer goes on where the log ends (JSONL and SQLite)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.sql_store import SqliteSessionStore

WRITER = textwrap.dedent(
    """
    import sys
    from lightagent.events.jsonl_store import JsonlSessionStore
    from lightagent.events.sql_store import SqliteSessionStore
    kind, target = sys.argv[1], sys.argv[2]
    store = JsonlSessionStore(target) if kind == "jsonl" else SqliteSessionStore(target)
    print("ready", flush=True)
    while True:
        last = store.last_sequence("k")
        batch = [{"type": "n.e", "data": {"pad": "x" * (200 * j)}} for j in range(1 + last % 3)]
        stored = store.append("k", batch, expected_sequence=last)
        print(stored[-1].sequence, flush=True)  # acknowledged
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_kill_during_append_loses_nothing_acknowledged(tmp_path, kind):
    rng = random.Random(7)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    target = str(tmp_path / ("sessions" if kind == "jsonl" else "s.db"))
    acked = 0
    for _ in range(40):
        proc = subprocess.Popen(
            [sys.executable, str(script), kind, target],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.random() * 0.1)
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        lines = [int(x) for x in out.split()]
        if lines:
            acked = max(acked, lines[-1])
        store = JsonlSessionStore(target) if kind == "jsonl" else SqliteSessionStore(target)
        events = store.events("k")
        sequences = [e.sequence for e in events]
        assert sequences == list(range(1, len(sequences) + 1))  # no gap, no duplicate
        assert len(sequences) >= acked  # nothing acknowledged is lost
        store.close()
    assert acked > 100
