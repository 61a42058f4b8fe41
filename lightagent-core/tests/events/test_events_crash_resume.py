"""The bar: SIGKILL a run with a side-effecting tool at random points, resume it in a new
process, and show every call's effect happened exactly once and every run completes."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqliteSessionStore

CHILD = textwrap.dedent(
    r"""
    import random, sqlite3, sys, time
    from lightagent import LightAgent, ScriptedModel, tool
    from lightagent.events.manager import SessionManager
    from lightagent.events.resume import resume
    from lightagent.events.sql_store import SqliteSessionStore

    session_db, ledger_db, session_id, mode = sys.argv[1:5]
    rng = random.Random()

    def ledger():
        db = sqlite3.connect(ledger_db, timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS applied (key TEXT PRIMARY KEY, item TEXT, n INTEGER)")
        return db

    @tool
    def charge(item: str, idempotency_key: str) -> str:
        '''Charge for one item: an external side effect.'''
        time.sleep(rng.random() * 0.02)
        with ledger() as db:  # one atomic commit: applied or not
            db.execute("INSERT INTO applied VALUES (?, ?, 1) "
                       "ON CONFLICT(key) DO UPDATE SET n = n + 1", (idempotency_key, item))
        time.sleep(rng.random() * 0.02)
        return f"charged {item}"

    def script(request):
        turn = request.messages
        done = sum(1 for m in turn if m.get("role") == "tool")
        if done == 0:
            return {"tool_calls": [{"id": "call_a", "name": "charge", "arguments": {"item": "a"}},
                                   {"id": "call_b", "name": "charge", "arguments": {"item": "b"}}]}
        if done == 2:
            return {"tool_calls": [{"id": "call_c", "name": "charge", "arguments": {"item": "c"}}]}
        return "done: " + ",".join(sorted(m["content"] for m in turn if m.get("role") == "tool"))

    def reconcile(call):
        row = ledger().execute("SELECT item FROM applied WHERE key = ?", (call.idempotency_key,)).fetchone()
        return f"charged {row[0]}" if row else None  # None: provably not applied

    store = SqliteSessionStore(session_db)
    agent = LightAgent(model=ScriptedModel(script), tools=[charge], session_store=store,
                       max_tool_workers=1)
    print("ready", flush=True)
    if mode == "start":
        answer = agent.run("charge a, b and c", session_id=session_id)
    else:
        (run_id,) = SessionManager(store).replay(session_id).incomplete_runs
        # approve=True is safe here: reconcile returned None only for effects not applied.
        # lease_seconds=0: the harness killed the previous resume, so its claim is dead.
        answer = resume(agent, run_id, session_id=session_id, reconcile=reconcile, approve=True,
                        lease_seconds=0)
    print("answer", answer, flush=True)
    """
)


def _spawn(script, args):
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_at_random(proc, rng, window):
    line = proc.stdout.readline()  # "ready": imports done, the run starts now
    if line.strip() != "ready":
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"child failed to start: {line}{out}{err}")
    time.sleep(rng.random() * window)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    return proc.returncode == -signal.SIGKILL


@pytest.mark.slow
# About 125 interpreter starts: ~40 s on a quiet 2-core machine, several times that on a busy one.
@pytest.mark.timeout(1200)
def test_sigkill_and_resume_never_repeats_a_side_effect(tmp_path):
    rng = random.Random(20261130)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    session_db = str(tmp_path / "sessions.db")
    ledger_db = str(tmp_path / "ledger.db")
    trials, killed, resumes = 50, 0, 0
    for trial in range(trials):
        sid = f"trial-{trial}"
        killed += _kill_at_random(_spawn(script, [session_db, ledger_db, sid, "start"]), rng, 0.15)
        for attempt in range(10):
            store = SqliteSessionStore(session_db)
            # A kill before the first write leaves no database at all (replay would say so).
            replay = SessionManager(store).replay(sid) if store.exists() else None
            if replay is not None and len(replay.completed_turns) == 1:
                break
            mode = (
                "resume" if replay is not None and replay.incomplete_turns else "start"
            )  # killed before anything was recorded
            proc = _spawn(script, [session_db, ledger_db, sid, mode])
            resumes += 1
            if attempt < 2 and rng.random() < 0.3:
                killed += _kill_at_random(proc, rng, 0.15)  # kill some resumes too
            else:
                out, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err[-3000:]
                assert "answer done: charged a,charged b,charged c" in out, out
        replay = SessionManager(SqliteSessionStore(session_db)).replay(sid)
        assert [len(t) for t in (replay.completed_turns, replay.incomplete_turns)] == [1, 0]
        assert replay.failed_turns == [], trial
    with sqlite3.connect(ledger_db) as db:
        rows = db.execute("SELECT item, n FROM applied").fetchall()
    assert rows, "no side effect ever ran"
    assert max(n for _, n in rows) == 1, [r for r in rows if r[1] > 1]
    assert len(rows) == 3 * trials  # every call of every run applied exactly once
    assert killed >= trials // 5, killed  # the kills really landed mid-run
    print(f"kills={killed} resumes={resumes}")
