"""A child process for the crash-matrix and cross-process approval tests (test-only).

    python flow_child.py MODE STORE_KIND STORE_PATH COUNTER_DB RUN_ID [DECISION_JSON]

MODE is ``run``, ``resume`` or ``approve``. STORE_KIND is ``json``, ``sqlite`` or ``url``
(STORE_PATH is then a SQL URL, PostgreSQL for instance).
Every step agent execution is counted in COUNTER_DB (a SQLite file, one row per
execution, committed before the agent returns), keyed by run id and step.
``LIGHTFLOW_CRASH_POINT=<point>:<step>`` (point = before_commit, inside_commit or
after_commit) makes the store's real commit path SIGKILL this process at that point.
``LIGHTFLOW_KILL_IN_STEP=<step>`` makes that step's agent SIGKILL this process once its
execution is counted, with no fault hook armed: the store's usual (one-statement) commit
path wrote every step before it.
The result is printed as one JSON line.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import sys
from typing import Any

from lightagent_flow import JsonLightFlowStore, LightFlow, SqlLightFlowStore

# A 10-step DAG with parallel branches: s0 -> {s1, s2}; s1 -> s3; s2 -> s4; {s3, s4} -> s5;
# s5 -> s6; s6 -> {s7, s8}; {s7, s8} -> s9.
SHAPE: dict[str, list[str]] = {
    "s0": [],
    "s1": ["s0"],
    "s2": ["s0"],
    "s3": ["s1"],
    "s4": ["s2"],
    "s5": ["s3", "s4"],
    "s6": ["s5"],
    "s7": ["s6"],
    "s8": ["s6"],
    "s9": ["s7", "s8"],
}


def _counter(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS executions (run_id TEXT, step TEXT)")
    return conn


def make_agent(step: str, counter_path: str, run_id: str) -> Any:
    """A sync step agent: records its execution durably, answers a digest of its input."""

    def agent(query: str) -> str:
        conn = _counter(counter_path)
        conn.execute("INSERT INTO executions VALUES (?, ?)", (run_id, step))
        conn.close()
        if os.environ.get("LIGHTFLOW_KILL_IN_STEP") == step:
            os.kill(os.getpid(), signal.SIGKILL)
        return f"{step}<{hashlib.sha256(query.encode()).hexdigest()[:10]}>"

    return agent


def build_flow(
    store: Any, counter_path: str, run_id: str, *, approval_step: str | None = None
) -> LightFlow:
    """The 10-step flow; ``approval_step`` requires approval when given."""
    flow = LightFlow(store=store)
    for name, deps in SHAPE.items():
        flow.step(
            name,
            agent=make_agent(name, counter_path, run_id),
            depends_on=deps,
            requires_approval=name == approval_step,
        )
    return flow


def open_store(kind: str, path: str) -> Any:
    """The store under test, with the crash point armed from the environment."""
    if kind == "json":
        store: Any = JsonLightFlowStore(path)
    else:
        store = SqlLightFlowStore(path if kind == "url" else f"sqlite:///{path}")
    point = os.environ.get("LIGHTFLOW_CRASH_POINT")
    if point:
        where, step = point.split(":")

        def fault(at: str, _run: str, at_step: str) -> None:
            if at == where and at_step == step:
                os.kill(os.getpid(), signal.SIGKILL)

        store._fault = fault
    return store


def main(argv: list[str]) -> int:
    mode, kind, store_path, counter_path, run_id = argv[:5]
    approval_step = os.environ.get("LIGHTFLOW_APPROVAL_STEP") or None
    store = open_store(kind, store_path)
    flow = build_flow(store, counter_path, run_id, approval_step=approval_step)
    if mode == "run":
        result = flow.run("crash matrix input", run_id=run_id)
    elif mode == "resume":
        result = flow.resume(run_id)
    elif mode == "approve":
        decision = flow.approve(run_id, approval_step or "", json.loads(argv[5]))
        print(json.dumps({"decision": decision}))
        return 0
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps({"status": result.status, "content": result.content, "error": result.error}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
