"""Writer turns on a SQLite store: one transaction at a time across threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest
from lightagent_dag.sql.turns import WriterTurns

fcntl = pytest.importorskip("fcntl")  # the cross-process half needs flock (not on Windows)


def _take_turn(database: str, took: object) -> None:
    with WriterTurns(database).turn():
        took.value = time.monotonic()  # type: ignore[attr-defined]


def test_a_turn_excludes_other_processes_until_it_ends(tmp_path) -> None:
    database = str(tmp_path / "dag.sqlite3")
    turns = WriterTurns(database)
    ctx = multiprocessing.get_context("spawn")
    took = ctx.Value("d", 0.0)
    with turns.turn():
        child = ctx.Process(target=_take_turn, args=(database, took))
        child.start()
        time.sleep(1.0)  # the child is up and waiting on the lock file by now
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
