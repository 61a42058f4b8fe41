"""A LightDAG run mirrored into a session store, drawn by ``lightagent trace view``: one span
per task, a failed attempt in red, the retry verified."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lightagent import PermissionSet, SecurityContext, SqliteSessionStore
from lightagent.cli import main
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    LightDAG,
    LocalArtifactStore,
    SqliteTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)


def test_dag_run_on_the_trace_page(tmp_path: Path, capsys) -> None:
    sessions = SqliteSessionStore(tmp_path / "sessions.db")
    store = SqliteTaskGraphStore(tmp_path / "dag.sqlite3")
    tries = {"b": 0}

    def work(context):
        if context.task_id == "b" and tries["b"] == 0:
            tries["b"] += 1
            raise RuntimeError("flaky worker")
        return TaskOutcome.candidate(f"{context.task_id}:ok")

    dag = LightDAG(
        store=store,
        artifact_store=LocalArtifactStore(tmp_path / "art"),
        config=DAGConfig(),
        verifiers={"ok": CallableVerifier("ok", lambda r: r.candidate_content.endswith(b":ok"))},
        session_store=sessions,
    )
    dag.register_worker("w", work)
    ctx = SecurityContext(
        tenant_id="acme",
        project_id="page",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )
    tasks = [
        TaskSpec(task_id=t, goal=t, acceptance_contract={}, worker_key="w", verifier_key="ok")
        for t in ("a", "b")
    ]
    dag.create_run(tasks, run_id="paged", context=ctx)
    result = dag.run("paged")
    assert result.success, result
    store.close()
    sessions.close()
    out = tmp_path / "dag.html"
    code = main(
        ["trace", "view", "dag-paged", "--store", f"sqlite:///{tmp_path / 'sessions.db'}",
         "--output", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    page = out.read_text()
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', page, re.S).group(1))
    spans = [(s["label"], s["status"]) for s in data["spans"] if s["kind"] == "task"]
    assert ("task a", "ok") in spans and ("task b", "ok") in spans
    assert ("task b", "failed") in spans  # the first attempt
    assert any(m["type"].startswith("dag.run.") for m in data["marks"])
