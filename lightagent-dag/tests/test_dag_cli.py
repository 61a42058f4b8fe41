"""The seeds' offline example, and the ``lightagent dag`` command (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lightagent import PermissionSet, SecurityContext
from lightagent_dag import DAGConfig, LightDAG, LocalArtifactStore, SqliteTaskGraphStore, TaskSpec

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "import sys; from lightagent.cli import main; sys.exit(main())"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    return env


def test_seed_offline_example_runs_as_written() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "dag_example.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "succeeded"


def _submit(tmp_path: Path, run_id: str, n: int) -> tuple[str, Path]:
    db = tmp_path / "dag.sqlite3"
    store = SqliteTaskGraphStore(db)
    dag = LightDAG(
        store=store, artifact_store=LocalArtifactStore(tmp_path / "art"), config=DAGConfig()
    )
    ctx = SecurityContext(
        tenant_id="acme",
        project_id="cli",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )
    tasks = [
        TaskSpec(
            task_id=f"t{i}",
            goal="sleep",
            acceptance_contract={},
            worker_key="sleepy",
            verifier_key="ok",
            metadata={"sleep_ms": 10},
        )
        for i in range(n)
    ]
    dag.create_run(tasks, run_id=run_id, context=ctx, check_keys=False)
    store.close()
    return str(db), tmp_path / "art"


def test_worker_process_runs_a_run_and_status_reports_it(tmp_path: Path) -> None:
    db, art = _submit(tmp_path, "cli-run", 5)
    worker = subprocess.run(
        [
            *CLI,
            "dag",
            "worker",
            "--store",
            db,
            "--app",
            "dag_test_app:configure",
            "--artifacts",
            str(art),
            "--run",
            "cli-run",
            "--until-idle",
            "--concurrency",
            "2",
            "--worker-id",
            "w-1",
            "--poll",
            "0.02",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert worker.returncode == 0, worker.stderr
    assert "w-1: ready" in worker.stdout
    status = subprocess.run(
        [*CLI, "dag", "status", "cli-run", "--store", db, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["run"]["status"] == "succeeded"
    assert {t["status"] for t in data["tasks"]} == {"verified"} and {
        t["lease_owner"] for t in data["tasks"]
    } == {None}
    text = subprocess.run(
        [*CLI, "dag", "status", "cli-run", "--store", db],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert "run cli-run: succeeded" in text.stdout and "verified=5" in text.stdout


def test_cli_errors_are_one_line_and_typed(tmp_path: Path) -> None:
    db, _ = _submit(tmp_path, "cli-run", 1)
    cases = [
        ["dag", "status", "missing", "--store", db],
        ["dag", "worker", "--store", db, "--app", "no_such_module:x"],
        ["dag", "worker", "--store", db, "--app", "dag_test_app"],
        ["dag", "worker", "--store", db, "--app", "dag_test_app:configure", "--until-idle"],
        ["dag", "worker", "--store", db, "--app", "dag_test_app:configure", "--concurrency", "0"],
    ]
    for args in cases:
        out = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, env=_env())
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.startswith("lightagent dag: [LA-") and "Traceback" not in out.stderr, (
            out.stderr
        )
