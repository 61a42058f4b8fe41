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


def _submit(
    tmp_path: Path,
    run_id: str,
    n: int,
    sleep_ms: int = 10,
    metadata: dict[str, dict] | None = None,
) -> tuple[str, Path]:
    """A run of ``n`` sleepy tasks; ``metadata`` adds to chosen tasks' metadata by id."""
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
            metadata={"sleep_ms": sleep_ms, **(metadata or {}).get(f"t{i}", {})},
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


def test_several_worker_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    # Every task first waits (bounded) until two worker processes have started one: the
    # first process up cannot finish the run alone before the others have started.
    meet = {"meet": {"file": str(tmp_path / "met.txt"), "workers": 2}}
    db, art = _submit(
        tmp_path,
        "multi",
        40,
        sleep_ms=100,
        metadata=dict.fromkeys((f"t{i}" for i in range(40)), meet),
    )
    args = [
        "dag",
        "worker",
        "--store",
        db,
        "--app",
        "dag_test_app:configure",
        "--artifacts",
        str(art),
        "--run",
        "multi",
        "--until-idle",
        "--poll",
        "0.02",
    ]
    procs = [
        subprocess.Popen(
            [*CLI, *args, "--worker-id", f"p{i}"],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    try:
        for proc in procs:
            assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            if proc.stderr:
                proc.stderr.close()
    store = SqliteTaskGraphStore(db)
    try:
        assert store.get_run("multi").status.value == "succeeded"
        assert store.publication_counts("multi") == {f"t{i}": 1 for i in range(40)}
        owners = {a.worker_id for a in store.attempts("multi")}
        assert len(owners) >= 2  # the work really was shared
        import sqlalchemy as sa

        with store.engine.connect() as conn:
            assert conn.execute(sa.text("PRAGMA integrity_check")).scalar_one() == "ok"
    finally:
        store.close()


def test_sigterm_lets_a_worker_finish_its_attempt_and_exit_cleanly(tmp_path: Path) -> None:
    import signal
    import time

    # The attempt lasts until the test lets it end, after SIGTERM: the signal lands
    # mid-attempt whatever the machine's speed.
    released = tmp_path / "released"
    db, art = _submit(tmp_path, "term", 1, metadata={"t0": {"hold_until": str(released)}})
    proc = subprocess.Popen(
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
            "--poll",
            "0.02",
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        store = SqliteTaskGraphStore(db)
        deadline = time.monotonic() + 60
        while (
            store.get_task("term", "t0").status.value != "running" and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert store.get_task("term", "t0").status.value == "running"
        proc.send_signal(signal.SIGTERM)  # mid-attempt
        # Let the signal land first (had it come late, the check is weaker, not wrong).
        time.sleep(0.2)
        released.touch()
        assert proc.wait(30) == 0, proc.stderr.read() if proc.stderr else ""
        assert store.get_run("term").status.value == "succeeded"  # the attempt in flight finished
        store.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()


RUNNER = """
import sys
from lightagent_dag import DAGConfig, LightDAG
import dag_test_app

cfg = DAGConfig(task_lease_seconds=1, scheduler_lease_seconds=1, max_concurrency=2, poll_interval=0.02)
dag = LightDAG(store=sys.argv[1], artifact_store=sys.argv[2], config=cfg)
dag_test_app.configure(dag)
print("started", flush=True)
dag.run(sys.argv[3])
"""


def _app():
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    import dag_test_app

    return dag_test_app


def test_a_killed_run_is_finished_by_running_it_again(tmp_path: Path) -> None:
    import signal
    import time

    # t11 holds its attempt until the process is killed: the kill lands mid-attempt.
    released = tmp_path / "released"
    db, art = _submit(
        tmp_path, "again", 12, sleep_ms=200, metadata={"t11": {"hold_until": str(released)}}
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, db, str(art), "again"], env=_env(), stdout=subprocess.DEVNULL
    )
    store = SqliteTaskGraphStore(db)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            tasks = {t.task_id: t.status.value for t in store.list_tasks("again")}
            if tasks["t11"] == "running" and sum(v == "verified" for v in tasks.values()) >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        released.touch()
    before = {t.task_id: t.status.value for t in store.list_tasks("again")}
    assert {"running", "verifying"} & set(before.values()), before  # killed mid-attempt
    dag = LightDAG(
        store=store,
        artifact_store=LocalArtifactStore(art),
        config=DAGConfig(task_lease_seconds=1, poll_interval=0.02),
    )
    _app().configure(dag)
    time.sleep(1.2)  # let the dead process's scheduler lease lapse
    result = dag.run("again")
    assert result.success
    assert store.publication_counts("again") == {f"t{i}": 1 for i in range(12)}
    expired = [a for a in store.attempts("again") if a.status.value == "expired"]
    assert expired and all(store.get_task("again", a.task_id).fence > a.fence for a in expired)
    store.close()


def test_status_of_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    for store in (
        str(folder / "typo.sqlite3"),  # a path whose file does not exist
        f"sqlite:///{folder / 'typo2.sqlite3'}",  # the same as a URL
        str(tmp_path / "no" / "such" / "dir" / "dag.sqlite3"),  # a missing folder
    ):
        out = subprocess.run(
            [*CLI, "dag", "status", "r1", "--store", store],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(),
        )
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(
            "lightagent dag: [LA-STORAGE-NOT-FOUND] No such task-graph store"
        )
        assert "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub"]


def test_status_of_a_database_without_a_dag_store_leaves_it_alone(tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (x TEXT)")
    before = other.read_bytes()
    out = subprocess.run(
        [*CLI, "dag", "status", "r1", "--store", str(other)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert out.returncode == 2 and "LA-STORAGE-NOT-FOUND" in out.stderr, out.stderr
    with sqlite3.connect(other) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert tables == {"notes"}
    assert other.read_bytes() == before


def test_every_dag_command_takes_a_relative_sqlite_url(tmp_path: Path) -> None:
    _submit(tmp_path, "rel", 2)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, "dag", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(),
            cwd=tmp_path,
        )

    for store in ("sqlite:///dag.sqlite3", "dag.sqlite3"):
        worker = cli(
            "worker",
            "--store",
            store,
            "--app",
            "dag_test_app:configure",
            "--artifacts",
            "art",
            "--run",
            "rel",
            "--until-idle",
            "--poll",
            "0.02",
        )
        assert worker.returncode == 0, worker.stderr
        for extra in ([], ["--json"], ["--watch", "--interval", "0.05", "--timeout", "30"]):
            out = cli("status", "rel", "--store", store, *extra)
            assert out.returncode == 0 and "Traceback" not in out.stderr, (store, extra, out.stderr)
            assert "succeeded" in out.stdout, (store, extra, out.stdout)
    missing = cli("status", "rel", "--store", "sqlite:///typo.sqlite3")
    assert missing.returncode == 2 and "LA-STORAGE-NOT-FOUND" in missing.stderr, missing.stderr
    assert not (tmp_path / "typo.sqlite3").exists()


def test_status_into_a_pipe_closed_before_any_output_exits_quietly(tmp_path: Path) -> None:
    db, _ = _submit(tmp_path, "piped", 3)
    read, write = os.pipe()
    os.close(read)  # `… | head` whose reader has already gone: every write is EPIPE
    try:
        for extra in ([], ["--json"]):
            out = subprocess.run(
                [*CLI, "dag", "status", "piped", "--store", db, *extra],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                env=_env(),
            )
            assert out.stderr == "" and out.returncode == 141, (extra, out.stderr)
    finally:
        os.close(write)
