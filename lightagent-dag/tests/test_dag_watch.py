"""``lightagent dag status --watch``: a live progress line on a real terminal (a pty), quiet
off one, following real worker processes on a SQLite file."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from lightagent import PermissionSet, SecurityContext
from lightagent_dag import DAGConfig, LightDAG, LocalArtifactStore, SqliteTaskGraphStore, TaskSpec

TESTS = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "import sys; from lightagent.cli import main; sys.exit(main())"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    env.pop("LIGHTAGENT_PROGRESS", None)
    return env


def _submit(tmp_path: Path, run_id: str, n: int, sleep_ms: int = 10) -> tuple[str, Path]:
    """A run of ``n`` sleeping tasks in a SQLite store, not yet worked on."""
    db = tmp_path / "dag.sqlite3"
    store = SqliteTaskGraphStore(db)
    dag = LightDAG(
        store=store, artifact_store=LocalArtifactStore(tmp_path / "art"), config=DAGConfig()
    )
    ctx = SecurityContext(
        tenant_id="acme", project_id="watch",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )  # fmt: skip
    tasks = [
        TaskSpec(task_id=f"t{i}", goal="sleep", acceptance_contract={}, worker_key="sleepy",
                 verifier_key="ok", metadata={"sleep_ms": sleep_ms})
        for i in range(n)
    ]  # fmt: skip
    dag.create_run(tasks, run_id=run_id, context=ctx, check_keys=False)
    store.close()
    return str(db), tmp_path / "art"


def _worker(db: str, art: Path, run_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "dag", "worker", "--store", db, "--app", "dag_test_app:configure",
         "--artifacts", str(art), "--run", run_id, "--until-idle", "--poll", "0.02"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip


def _in_pty(args: list[str], timeout: float = 60) -> tuple[int, str]:
    """Run ``args`` with stdout and stderr on a pseudo-terminal; returns (exit code, output)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(args, stdout=slave, stderr=slave, env=_env(), close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        if time.monotonic() > deadline:
            proc.kill()
            break
    os.close(master)
    return proc.wait(timeout=10), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_watch_draws_progress_on_a_terminal_until_the_run_ends(tmp_path: Path) -> None:
    db, art = _submit(tmp_path, "watched", 4, sleep_ms=150)
    worker = _worker(db, art, "watched")
    try:
        code, out = _in_pty(
            [*CLI, "dag", "status", "watched", "--store", db, "--watch", "--interval", "0.05"]
        )
    finally:
        assert worker.wait(timeout=60) == 0, worker.stderr.read() if worker.stderr else ""
    assert code == 0, out
    assert "dag watched" in out and "4/4" in out  # the progress line, finished
    assert "\x1b[" in out  # drawn with terminal control sequences (rich)
    assert "run watched: succeeded" in out and "verified=4" in out


@pytest.mark.slow
def test_watch_off_a_terminal_is_quiet_and_prints_the_final_status(tmp_path: Path) -> None:
    db, art = _submit(tmp_path, "piped", 3, sleep_ms=100)
    worker = _worker(db, art, "piped")
    watch = subprocess.run(
        [*CLI, "dag", "status", "piped", "--store", db, "--watch", "--interval", "0.05"],
        capture_output=True, text=True, timeout=60, env=_env(),
    )  # fmt: skip
    assert worker.wait(timeout=60) == 0
    assert watch.returncode == 0, watch.stderr
    assert watch.stderr == "" and "dag piped" not in watch.stdout and "\x1b[" not in watch.stdout
    assert watch.stdout.startswith("run piped: succeeded")


def test_watch_timeout_and_bad_interval_are_typed(tmp_path: Path) -> None:
    db, _ = _submit(tmp_path, "idle", 1)
    slow = subprocess.run(
        [*CLI, "dag", "status", "idle", "--store", db, "--watch", "--interval", "0.05",
         "--timeout", "0.2"],
        capture_output=True, text=True, timeout=60, env=_env(),
    )  # fmt: skip
    assert slow.returncode == 2 and "LA-DAG-STATE" in slow.stderr and "--timeout" in slow.stderr
    bad = subprocess.run(
        [*CLI, "dag", "status", "idle", "--store", db, "--watch", "--interval", "0"],
        capture_output=True, text=True, timeout=60, env=_env(),
    )  # fmt: skip
    assert bad.returncode == 2 and "LA-CONFIG" in bad.stderr
