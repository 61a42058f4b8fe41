"""Restored after a restart from the session log alone: a process is SIGKILLed mid-run
(a real SQLite file, the real loopback server), and a new process reads back the inbox
(pending and claimed), the goals, the budget used and the subagent records — then goes on
without repeating the subagent run or losing the pending message."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from lightagent import BudgetLimits, LightAgent
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqliteSessionStore

CHILD = textwrap.dedent(
    r"""
    import asyncio, os, sys, threading, time
    from pathlib import Path
    from lightagent import BudgetLimits, LightAgent
    from lightagent.events.sql_store import SqliteSessionStore

    db, base_url, marker = sys.argv[1:4]
    holder = {}

    def record_note(text: str) -> str:
        '''Record a note (a side effect; this one never returns).'''
        holder["rt"].inbox.enqueue("followup", "second note", message_id="m2")
        # The side effect lands whole or not at all (written aside, synced, then renamed);
        # only then does the parent hear that it may kill.
        with open(marker + ".tmp", "w") as handle:
            handle.write("in the tool")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(marker + ".tmp", marker)
        print("in-tool", flush=True)
        time.sleep(600)  # killed here
        return "noted"

    def agent(name, model, **kw):
        return LightAgent(name=name, model=model, api_key="k", base_url=base_url, **kw)

    lead = agent("lead", "lead-model", tools=[record_note],
                 session_store=SqliteSessionStore(db),
                 budget_limits=BudgetLimits(model_calls=10, per="session"))
    rt = holder["rt"] = lead.runtime.for_session("long")
    rt.goals.create("Ship it", acceptance_criteria=["shipped"], goal_id="ship", activate=True)
    rt.goals.create("Docs", goal_id="docs")
    rt.goals.block("docs", "waiting for review")
    rt.goals.create("Old plan", goal_id="old")
    rt.goals.cancel("old", "superseded")
    rt.inbox.enqueue("followup", "first note", message_id="m1")
    rt.inbox.enqueue("context", "withdrawn", message_id="m0")
    rt.inbox.reject("m0", "stale")

    subs = rt.subagents
    subs.register(agent("helper", "helper-model"), persistent=True,
                  allowed_capabilities=["tool.search"], metadata={"role": "summaries"})
    done = asyncio.run(subs.run("helper", "summarize", idempotency_key="sum-1"))
    assert done.content == "summary done", done
    subs.register(agent("stuck", "stuck-model"), parent_agent_id="helper")
    threading.Thread(
        target=lambda: asyncio.run(subs.run("stuck", "hang forever")), daemon=True
    ).start()
    while not any(e.type == "subagent.started" and e.data["agent_id"] == "stuck"
                  for e in SqliteSessionStore(db).events("long")):
        time.sleep(0.01)
    lead.run("Write the release note", session_id="long")
    """
)


def _server_reply(release: threading.Event):
    def reply(body):
        model = body["model"]
        if model == "stuck-model":
            release.wait(60)  # its process is killed while this request is open
            return "too late"
        if model == "helper-model":
            return "summary done"
        messages = body["messages"]
        if not any(m["role"] == "tool" for m in messages):
            return {"tool_calls": [{"name": "record_note", "arguments": {"text": "v1"}}]}
        return "shipped v1"

    return reply


def test_sigkill_mid_run_then_a_new_process_restores_everything(loopback_server, tmp_path) -> None:
    release = threading.Event()
    loopback_server.default = _server_reply(release)
    db, marker = tmp_path / "sessions.sqlite3", tmp_path / "in-tool"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db), loopback_server.base_url, str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # the child's word: the marker is written whole
        if line.strip() != "in-tool":
            out, err = proc.communicate(timeout=60)
            raise AssertionError(f"the child never reached its tool: {line}{out}{err[-3000:]}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)

    # -- a new process: everything from the log alone -------------------------------------
    lead = LightAgent(
        name="lead",
        model="lead-model",
        api_key="k",
        base_url=loopback_server.base_url,
        session_store=SqliteSessionStore(db),
        budget_limits=BudgetLimits(model_calls=10, per="session"),
    )
    rt = lead.runtime.for_session("long")
    (killed_run,) = SessionManager(SqliteSessionStore(db)).replay("long").incomplete_runs

    inbox = {m.message_id: m for m in rt.inbox.list()}
    assert (inbox["m1"].status, inbox["m1"].claimed_by_run) == ("claimed", killed_run)
    assert inbox["m2"].status == "pending" and inbox["m2"].content == "second note"
    assert inbox["m0"].status == "rejected"

    goals = {g.goal_id: g for g in rt.goals.list()}
    assert goals["ship"].status == "active"
    assert (goals["docs"].status, goals["docs"].blocker) == ("blocked", "waiting for review")
    assert goals["old"].status == "cancelled"

    assert rt.budget.used()["model_calls"] == 1  # the killed run's one settled request
    assert rt.budget.remaining()["model_calls"] == 9

    records = {r.agent_id: r for r in rt.subagents.list()}
    helper, stuck = records["helper"], records["stuck"]
    assert (helper.status, helper.runs, helper.persistent) == ("completed", 1, True)
    assert helper.permissions["allowed"] == ["tool.search"]
    assert helper.metadata == {"role": "summaries"}
    assert (stuck.status, stuck.parent_agent_id, stuck.depth) == ("interrupted", "helper", 2)
    assert rt.subagents.context("stuck").permissions.allowed == frozenset({"tool.search"})

    snap = rt.snapshot()
    assert [m["message_id"] for m in snap["inbox"]["pending"]] == ["m2"]
    assert snap["budget"]["used"]["model_calls"] == 1

    # -- and goes on: the subagent's result is read back, the pending message taken in ----
    requests_before = len(loopback_server.requests)
    helper_again = LightAgent(
        name="helper", model="helper-model", api_key="k", base_url=loopback_server.base_url
    )
    rt.subagents.register(helper_again, persistent=True)
    replay = asyncio.run(rt.subagents.run("helper", "summarize", idempotency_key="sum-1"))
    assert replay.idempotent_replay and replay.content == "summary done"
    assert len(loopback_server.requests) == requests_before  # not run again

    def record_note(text: str) -> str:
        """Record a note."""
        raise AssertionError("the interrupted call is reconciled, never re-run")

    lead.tools.register_tools([record_note])
    answer = rt.continue_run(reconcile=lambda call: "noted" if marker.exists() else None)
    assert answer == "shipped v1"
    last = loopback_server.requests[-1]["messages"]
    assert last[-1] == {"role": "user", "content": "second note"}  # after the tool result
    assert [m["role"] for m in last[-3:]] == ["assistant", "tool", "user"]
    assert rt.inbox.get("m2").status == "claimed"
    assert rt.goals.get("ship").status == "completed"
    assert rt.budget.used()["model_calls"] == 2
    assert json.dumps(rt.snapshot(), default=str)  # JSON-safe
    assert Path(marker).read_text() == "in the tool"
