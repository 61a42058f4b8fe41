"""Where a session store lives: reads never create it, writes never create missing folders
(unless asked), and a failure names its cause in the run's error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.errors import StorageError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore

KINDS = ["sqlite-url", "sqlite", "jsonl"]


def _open(kind: str, where: Path, **options: Any) -> Any:
    if kind == "sqlite-url":
        return SqlSessionStore(f"sqlite:///{where / 'x.db'}", **options)
    if kind == "sqlite":
        return SqliteSessionStore(where / "x.db", **options)
    return JsonlSessionStore(where / "sessions", **options)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_folder_is_never_created(tmp_path, kind):
    missing = tmp_path / "no" / "such" / "dir"
    store = _open(kind, missing)
    # Reads find nothing and create nothing.
    assert store.events("s") == [] and store.last_sequence("s") == 0
    assert store.get_session("s") is None and store.list_sessions() == []
    assert not store.exists()
    with pytest.raises(StorageError) as info:
        store.append("s", [{"type": "n.e"}])
    error = info.value
    assert error.code == "LA-STORAGE-NOT-FOUND"
    assert str(missing) in error.message
    assert "create_dirs=True" in error.hint
    assert _tree(tmp_path) == []
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_create_dirs_opts_in(tmp_path, kind):
    store = _open(kind, tmp_path / "a" / "b", create_dirs=True)
    assert store.append("s", [{"type": "n.e"}])[0].sequence == 1
    assert store.exists() and store.events("s")[0].type == "n.e"
    store.close()


@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
def test_the_default_location_makes_its_own_folder(tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    store = SqliteSessionStore() if kind == "sqlite" else JsonlSessionStore()
    assert store.events("s") == [] and _tree(tmp_path) == []
    store.append("s", [{"type": "n.e"}])
    assert (tmp_path / ".lightagent").is_dir()
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_replay_and_export_of_a_missing_store_say_so_and_create_nothing(tmp_path, kind):
    store = _open(kind, tmp_path)  # the folder exists, the store does not
    out = tmp_path / "out.jsonl"
    manager = SessionManager(store)
    agent = LightAgent(model=ScriptedModel([]), session_store=store)
    calls = {
        "replay": lambda: manager.replay("s"),
        "export": lambda: manager.export("s", out),
        "fork": lambda: manager.fork("s"),
        "checkpoint": lambda: manager.checkpoint("s", "x"),
        "replay_session": lambda: agent.replay_session("s"),
        "export_session": lambda: agent.export_session("s", out),
        "get_session": lambda: agent.get_session("s"),
    }
    for name, call in calls.items():
        with pytest.raises(StorageError) as info:
            call()
        assert info.value.code == "LA-STORAGE-NOT-FOUND", name
        assert "No such store" in info.value.message, name
    assert _tree(tmp_path) == []
    # Once written, an unknown session of an existing store is simply empty.
    store.append("other", [{"type": "n.e"}])
    assert manager.replay("s").event_count == 0
    store.close()


def _failing_run(store: Any) -> dict[str, Any]:
    agent = LightAgent(model=ScriptedModel(["never sent"]), session_store=store)
    result = agent.run("hi", session_id="s", result_format="object")
    assert result.error is not None
    return result.error


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_names_the_missing_folder(tmp_path, kind):
    missing = tmp_path / "nope"
    error = _failing_run(_open(kind, missing))
    assert error["code"] == "LA-SESSION"
    assert "LA-STORAGE-NOT-FOUND" in error["message"] and str(missing) in error["message"]
    assert "create_dirs=True" in error["hint"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_names_a_file_in_the_way(tmp_path, kind):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    error = _failing_run(_open(kind, blocker))
    assert error["code"] == "LA-SESSION"
    assert "LA-STORAGE]" in error["message"] and str(blocker) in error["message"]
    assert "in the way" in error["message"] + error["hint"]
    assert blocker.read_text() == "not a folder"


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_names_a_refused_permission(kind):
    # /sys refuses new entries even to root (mode bits do not stop root elsewhere).
    sys_dir = Path("/sys")
    probe = sys_dir / "lightagent-permission-probe"
    try:
        probe.mkdir()
    except OSError:
        pass
    else:  # pragma: no cover - a writable /sys: nothing to test here
        probe.rmdir()
        pytest.skip("/sys accepts new folders here")
    error = _failing_run(_open(kind, sys_dir))
    assert error["code"] == "LA-SESSION"
    text = error["message"].lower()
    assert "permission denied" in text or "operation not permitted" in text, error["message"]
