"""Crash bars in real subprocesses: SIGKILL around every step commit, then resume elsewhere.

The child process (``scripts/flow_child.py``) runs a 10-step flow; the store's real commit
path kills it (SIGKILL) at a named point before, inside (half the journal line appended /
row written but the transaction not committed) or after the commit of one step. A new process resumes the run. Every step whose commit survived ran exactly once,
the others at most twice, and the final output equals the crash-free run's.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lightagent_flow import JsonLightFlowStore, SqlLightFlowStore

CHILD = Path(__file__).parent / "scripts" / "flow_child.py"
STEPS = [f"s{i}" for i in range(10)]
POINTS = ["before_commit", "inside_commit", "after_commit"]


def _child(
    *args: str,
    crash: str | None = None,
    approval_step: str | None = None,
    kill_in: str | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTFLOW_")}
    if crash:
        env["LIGHTFLOW_CRASH_POINT"] = crash
    if kill_in:
        env["LIGHTFLOW_KILL_IN_STEP"] = kill_in
    if approval_step:
        env["LIGHTFLOW_APPROVAL_STEP"] = approval_step
    return subprocess.run(
        [sys.executable, str(CHILD), *args], capture_output=True, text=True, env=env, timeout=120
    )


def _counts(counter: Path, run_id: str) -> dict[str, int]:
    if not counter.exists():
        return {}
    conn = sqlite3.connect(counter)
    rows = conn.execute(
        "SELECT step, COUNT(*) FROM executions WHERE run_id = ? GROUP BY step", (run_id,)
    ).fetchall()
    conn.close()
    return dict(rows)


def _open(kind: str, path: Path | str) -> Any:
    if kind == "json":
        return JsonLightFlowStore(path)
    return SqlLightFlowStore(str(path) if kind == "url" else f"sqlite:///{path}")


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_crash_matrix_every_committed_step_runs_exactly_once(kind: str, tmp_path: Path) -> None:
    store_path = tmp_path / ("runs.db" if kind == "sqlite" else "runs")
    counter = tmp_path / "counter.db"
    baseline = _result(_child("run", kind, str(store_path), str(counter), "baseline"))
    assert baseline["status"] == "success" and baseline["content"].startswith("s9<")
    assert _counts(counter, "baseline") == dict.fromkeys(STEPS, 1)

    for step in STEPS:
        for point in POINTS:
            run_id = f"crash-{step}-{point.replace('_', '-')}"
            crashed = _child(
                "run", kind, str(store_path), str(counter), run_id, crash=f"{point}:{step}"
            )
            assert crashed.returncode == -signal.SIGKILL, (
                run_id,
                crashed.returncode,
                crashed.stderr[-1500:],
            )

            # What survived the kill, read by a fresh store object in this process.
            record = _open(kind, store_path).load_run(run_id)
            # A store with finish_run commits the last step and the run's outcome together.
            finished = step == STEPS[-1] and point == "after_commit" and kind == "sqlite"
            assert record is not None
            assert record["status"] == ("success" if finished else "running"), run_id
            committed = {s["name"] for s in record["steps"] if s["status"] == "success"}
            if point == "after_commit":
                assert step in committed, run_id
            else:
                assert step not in committed, run_id
            before = _counts(counter, run_id)
            assert before[step] == 1
            assert all(before.get(s) == 1 for s in committed)

            resumed = _result(_child("resume", kind, str(store_path), str(counter), run_id))
            assert resumed["status"] == "success", (run_id, resumed)
            assert resumed["content"] == baseline["content"], run_id
            counts = _counts(counter, run_id)
            for s in STEPS:
                if s in committed:
                    assert counts[s] == 1, (run_id, s, counts)  # never re-run once committed
                else:
                    assert 1 <= counts[s] <= 2, (
                        run_id,
                        s,
                        counts,
                    )  # the in-flight one at most twice
            if point != "after_commit":
                assert counts[step] == 2, (run_id, counts)
            if kind == "json":  # the torn append of a killed commit is cut off on resume
                assert (store_path / run_id / "steps.jsonl").read_bytes().endswith(b"\n")
            final = _open(kind, store_path).load_run(run_id)
            assert final["status"] == "success"
            assert all(s["status"] == "success" for s in final["steps"])


@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_approval_is_persisted_and_resumed_from_other_processes(kind: str, tmp_path: Path) -> None:
    store_path = tmp_path / ("runs.db" if kind == "sqlite" else "runs")
    counter = tmp_path / "counter.db"
    args = (kind, str(store_path), str(counter), "approval-run")

    first = _result(_child("run", *args, approval_step="s5"))
    assert first["status"] == "waiting_approval"
    assert _counts(counter, "approval-run").get("s5") is None

    # Process 2 records the human decision; process 3 resumes and runs the approved step once.
    decided = _child(
        "approve",
        *args,
        json.dumps({"action": "edit", "query": "approved input"}),
        approval_step="s5",
    )
    assert decided.returncode == 0, decided.stderr[-1500:]
    resumed = _result(_child("resume", *args, approval_step="s5"))
    assert resumed["status"] == "success"
    counts = _counts(counter, "approval-run")
    assert counts == dict.fromkeys(STEPS, 1)
    record = _open(kind, store_path).load_run("approval-run")
    s5 = next(s for s in record["steps"] if s["name"] == "s5")
    assert s5["query"] == "approved input" and s5["approval_decision"]["action"] == "edit"


# What each step depends on, transitively (the steps committed before it starts).
_UPSTREAM = {
    "s0": set(),
    "s1": {"s0"},
    "s3": {"s0", "s1"},
    "s5": {"s0", "s1", "s2", "s3", "s4"},
    "s9": {f"s{i}" for i in range(9)},
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("url", marks=pytest.mark.postgres)])
def test_sigkill_after_one_statement_commits_loses_no_step(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """With no fault hook the store commits each step in one statement; a SIGKILL while a
    later step runs keeps every step committed before it, and a resume never reruns them."""
    store_path = (
        request.getfixturevalue("postgres_url") if kind == "url" else str(tmp_path / "runs.db")
    )
    counter = tmp_path / "counter.db"
    baseline = _result(_child("run", kind, store_path, str(counter), f"base-{tmp_path.name}"))
    for step, upstream in _UPSTREAM.items():
        run_id = f"kill-{step}-{tmp_path.name}"
        crashed = _child("run", kind, store_path, str(counter), run_id, kill_in=step)
        assert crashed.returncode == -signal.SIGKILL, (run_id, crashed.stderr[-1500:])
        record = _open(kind, store_path).load_run(run_id)
        assert record is not None and record["status"] == "running"
        committed = {s["name"] for s in record["steps"] if s["status"] == "success"}
        assert upstream <= committed and step not in committed, (run_id, committed)

        resumed = _result(_child("resume", kind, store_path, str(counter), run_id))
        assert resumed["status"] == "success" and resumed["content"] == baseline["content"]
        counts = _counts(counter, run_id)
        assert all(counts[s] == 1 for s in committed), (run_id, counts)
        assert counts[step] == 2, (run_id, counts)  # killed mid-step: it ran again
