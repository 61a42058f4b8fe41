"""Writer turns on a SQLite store: one transaction at a time across threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest
from lightagent_dag.sql.turns import WriterTurns

fcntl = pytest.importorskip("fcntl")  # the cross-process half needs flock (not on Windows)


def _take_turn(database: str, took: object, trying: object) -> None:
    turns = WriterTurns(database)
    trying.set()  # type: ignore[attr-defined]
    with turns.turn():
        took.value = time.monotonic()  # type: ignore[attr-defined]


def test_a_turn_excludes_other_processes_until_it_ends(tmp_path) -> None:
    database = str(tmp_path / "dag.sqlite3")
    turns = WriterTurns(database)
    ctx = multiprocessing.get_context("spawn")
    took, trying = ctx.Value("d", 0.0), ctx.Event()
    with turns.turn():
        child = ctx.Process(target=_take_turn, args=(database, took, trying))
        child.start()
        # A spawned child can take seconds to start on a loaded machine: the window in
        # which it must not get the turn opens only once it is asking for it.
        assert trying.wait(60), "the child never asked for the turn"
        time.sleep(1.0)
        assert took.value == 0.0, "another process took the turn while it was held"
        released = time.monotonic()
    child.join(30)
    assert child.exitcode == 0
    assert took.value >= released


def test_threads_take_turns_and_a_nested_turn_reenters(tmp_path) -> None:
    turns = WriterTurns(str(tmp_path / "dag.sqlite3"))
    inside = 0
    overlaps = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, overlaps
        for _ in range(50):
            with turns.turn():
                with lock:
                    inside += 1
                    overlaps += inside > 1
                with turns.turn():  # a transaction inside a transaction's turn
                    time.sleep(0.0005)
                with lock:
                    inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert overlaps == 0


def _hold_a_write(path: str, holding: object, release: object) -> None:
    from lightagent_dag import SqliteTaskGraphStore

    store = SqliteTaskGraphStore(path)

    def write_and_wait(conn: object) -> None:
        holding.set()  # type: ignore[attr-defined]
        release.wait(30)  # type: ignore[attr-defined]

    store.transaction(write_and_wait)
    store.close()


def test_reads_never_wait_for_a_writer_that_holds_its_turn(tmp_path) -> None:
    # A writer frozen mid-transaction (SIGSTOP, a paused VM) holds the writer turn; a
    # reader — `lightagent dag status`, a run's poll — reads the last commit meanwhile.
    from lightagent_dag import DAGConfig, SqliteTaskGraphStore, TaskSpec

    path = str(tmp_path / "dag.sqlite3")
    store = SqliteTaskGraphStore(path)
    spec = TaskSpec(task_id="t", goal="g", acceptance_contract={}, worker_key="w", verifier_key="v")
    store.create_run(
        "r",
        [spec],
        tenant_id="a",
        project_id="p",
        user_id="u",
        context={"tenant_id": "a", "project_id": "p"},
        root_task_ids=["t"],
        config=DAGConfig(),
    )
    ctx = multiprocessing.get_context("spawn")
    holding, release = ctx.Event(), ctx.Event()
    writer = ctx.Process(target=_hold_a_write, args=(path, holding, release))
    writer.start()
    try:
        assert holding.wait(30)
        got: list[object] = []
        reader = threading.Thread(
            target=lambda: got.extend(
                (store.get_run("r"), store.list_tasks("r"), store.events("r", limit=10))
            )
        )
        reader.start()
        reader.join(20)  # a reader waiting for the writer would wait its 30 s
        assert not reader.is_alive(), "a read waited for the writer's turn"
        assert got[0].status.value == "running" and [t.task_id for t in got[1]] == ["t"]
    finally:
        release.set()
        writer.join(30)
        store.close()
    assert writer.exitcode == 0
