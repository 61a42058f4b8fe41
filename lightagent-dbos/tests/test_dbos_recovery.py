"""Crash recovery with real processes, on SQLite and on PostgreSQL.

A child process runs a durable agent and is SIGKILLed at a known point (the test learns
the point from a handshake: the model server sees the next request arrive, or the tool
writes to a FIFO); a second process launches DBOS, which recovers the run.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

import pytest
from lightagent.events.sql_store import SqliteSessionStore

from .children import last_json, spawn
from .conftest import unique_name

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def system_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def _cfg(tmp_path: Path, url: str, server, **kw) -> dict:
    return {
        "dir": str(tmp_path),
        "url": url,
        "base_url": server.base_url,
        "name": unique_name("crash"),
        "workflow_id": "wf-crash",
        "mode": "run",
        **kw,
    }


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_killed_between_tool_and_next_request_recovers(system_db, loopback_server, tmp_path):
    arrived, release = threading.Event(), threading.Event()

    def held(body):  # the request after the tool: the child is killed while it waits
        arrived.set()
        release.wait(120)
        return "never read"

    loopback_server.reply(
        {"tool_calls": [{"name": "write_note", "arguments": {"text": "hello"}}]},
        held,
        "All noted.",
    )
    session_db = str(tmp_path / "sessions.sqlite3")
    cfg = _cfg(
        tmp_path,
        system_db,
        loopback_server,
        query="Note hello",
        session_db=session_db,
        session_id="s1",
    )
    first = spawn(cfg)
    assert arrived.wait(120), "the child never made its second model request"
    first.kill()
    first.wait()
    release.set()

    result = last_json(spawn({**cfg, "mode": "recover"}))
    assert result == {"content": "All noted.", "error": None}
    assert _lines(tmp_path / "notes.log") == ["hello"]  # the tool ran exactly once
    # the recovered request carried the checkpointed tool result
    assert loopback_server.requests[2]["messages"][-1]["content"] == "noted: hello"
    # the session log holds the run once, with no event written twice by the replay
    events = [e for e in SqliteSessionStore(session_db).events("s1")]
    types = Counter(e.type for e in events)
    assert types["turn.started"] == 1
    assert types["tool.requested"] == 1 and types["tool.finished"] == 1
    assert types["model.requested"] == 2 and types["assistant.completed"] == 2
    assert types["run.completed"] == 1
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))


def test_killed_inside_a_tool_is_not_run_again(system_db, loopback_server, tmp_path):
    loopback_server.reply({"tool_calls": [{"name": "write_note", "arguments": {"text": "once"}}]})
    os.mkfifo(tmp_path / "fifo")
    cfg = _cfg(tmp_path, system_db, loopback_server, query="Note once", block_tool=True)
    first = spawn(cfg)
    with open(tmp_path / "fifo", encoding="utf-8") as fifo:
        assert fifo.readline() == "started\n"
    first.kill()
    first.wait()

    result = last_json(spawn({**cfg, "mode": "recover", "block_tool": False}))
    assert result["error"]["code"] == "LA-DBOS-UNKNOWN-OUTCOME"
    assert result["error"]["details"]["tool"] == "write_note"
    assert _lines(tmp_path / "notes.log") == ["once"]


def test_killed_inside_an_idempotent_tool_runs_it_again(system_db, loopback_server, tmp_path):
    loopback_server.reply(
        {"tool_calls": [{"name": "set_flag", "arguments": {"flag": "green"}}]}, "Flag set."
    )
    os.mkfifo(tmp_path / "fifo")
    cfg = _cfg(
        tmp_path,
        system_db,
        loopback_server,
        query="Set green",
        block_tool=True,
        idempotent=["set_flag"],
    )
    first = spawn(cfg)
    with open(tmp_path / "fifo", encoding="utf-8") as fifo:
        assert fifo.readline() == "started\n"
    first.kill()
    first.wait()

    result = last_json(spawn({**cfg, "mode": "recover", "block_tool": False}))
    assert result == {"content": "Flag set.", "error": None}
    assert _lines(tmp_path / "flag_attempts.log") == ["green", "green"]
    assert (tmp_path / "flag-green").read_text() == "on"
