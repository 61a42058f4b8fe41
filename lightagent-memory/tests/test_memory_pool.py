"""``SharedMemoryPool``: scopes, ranking and filters, the same in memory, on SQLite and on
PostgreSQL; durable across instances and processes; bad input typed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
from lightagent import LightAgentError, MemoryScope, SharedMemoryPool


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def pool(request, tmp_path):
    if request.param == "memory":
        made = SharedMemoryPool(agent_name="writer")
    elif request.param == "sqlite":
        made = SharedMemoryPool(f"sqlite:///{tmp_path / 'pool.db'}", agent_name="writer")
    else:
        url = request.getfixturevalue("postgres_url")
        made = SharedMemoryPool(url, agent_name="writer", table=f"pool_{uuid.uuid4().hex[:10]}")
    yield made
    made.close()


def texts(answer):
    return [r["memory"] for r in answer["results"]]


def test_ranking_counts_shared_words_then_recency(pool):
    pool.store("tea is green", "u")
    pool.store("coffee is black", "u")
    time.sleep(0.002)
    pool.store("green tea is hot tea", "u")
    pool.store("東京の天気", "u")
    assert texts(pool.retrieve("hot green tea", "u")) == ["green tea is hot tea", "tea is green"]
    assert texts(pool.retrieve("green tea", "u"))[0] == "green tea is hot tea", (
        "recency breaks ties"
    )
    assert texts(pool.retrieve("東京", "u")) == ["東京の天気"]
    assert pool.retrieve("", "u") == {"results": []}
    assert pool.retrieve("nothing shared", "u") == {"results": []}
    scores = [r["score"] for r in pool.retrieve("hot green tea", "u")["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] == 3


def test_filters_apply_before_the_limit(pool):
    for index in range(30):
        pool.store(
            f"report number {index}", "u", scope=MemoryScope(source="tool", agent_name="noisy")
        )
    pool.store("the one report by the editor", "u", scope=MemoryScope(agent_name="editor"))
    only = pool.retrieve("report", "u", agent_name="editor", limit=1)
    assert texts(only) == ["the one report by the editor"]
    assert len(pool.retrieve("report", "u")["results"]) == pool.max_results
    assert len(pool.retrieve("report", "u", source="tool", limit=50)["results"]) == 30
    assert pool.retrieve("report", "u", scope="agent")["results"] == []


def test_provenance_defaults_metadata_and_scope(pool):
    pool.store("plain", "u")
    pool.store("labelled", "u", metadata={"source": "tool", "trace_id": "t1"})
    pool.store("scoped", "u", metadata={"source": "tool"}, scope=MemoryScope.reflection("critic"))
    by_text = {r.memory: r.metadata for r in pool.list_records(user_id="u")}
    assert by_text["plain"]["source"] == "user" and by_text["plain"]["agent_name"] == "writer"
    assert by_text["labelled"]["source"] == "tool" and by_text["labelled"]["trace_id"] == "t1"
    assert (
        by_text["scoped"]["source"] == "reflection" and by_text["scoped"]["agent_name"] == "critic"
    )
    assert all(m["user_id"] == "u" and m["memory_id"] for m in by_text.values())


def test_list_records_clear_and_len(pool):
    pool.store("a note", "tenant-a:alice")
    pool.store("another note", "tenant-a:alice", scope=MemoryScope(source="tool"))
    pool.store("bob's note", "tenant-a:bob")
    assert [r.memory for r in pool.list_records(user_id="tenant-a:alice")] == [
        "a note",
        "another note",
    ]
    assert [r.memory for r in pool.list_records(user_id="tenant-a:alice", source="tool")] == [
        "another note"
    ]
    assert len(pool) == 3 and len(pool.list_records(limit=2)) == 2
    with pytest.raises(LightAgentError) as info:
        pool.list_records(colour="blue")
    assert info.value.code == "LA-CONFIG"
    assert pool.clear(user_id="tenant-a:alice") == 2 and len(pool) == 1
    assert pool.retrieve("note", "tenant-a:alice")["results"] == []
    assert pool.clear() == 1 and len(pool) == 0


def test_a_memory_id_is_stored_once_and_never_for_two_users(pool):
    first = pool.store("promoted fact", "u", memory_id="cand_1")
    again = pool.store("promoted fact", "u", metadata={"memory_id": "cand_1"})
    assert first["stored"] and not first["existing"] and again["existing"]
    assert len(pool) == 1
    with pytest.raises(LightAgentError) as info:
        pool.store("hijack", "mallory", memory_id="cand_1")
    assert info.value.code == "LA-STORAGE-CONFLICT"
    assert [r.memory for r in pool.list_records()] == ["promoted fact"]


def test_any_string_round_trips_and_stays_its_own_user(pool):
    hostile = ["a\x00b", "100%", "%00", "_", "*", "a" * 5000, "\u0430lice", "x:y", "'; --"]
    for index, user in enumerate(hostile):
        pool.store(f"note {index} with\x00nul and 50% off", user)
    for index, user in enumerate(hostile):
        found = pool.retrieve("note nul off", user)["results"]
        assert [r["memory"] for r in found] == [f"note {index} with\x00nul and 50% off"], user
        assert found[0]["user_id"] == user
    assert (
        pool.retrieve("note", "a")["results"] == [] and pool.retrieve("note", "%")["results"] == []
    )


def test_bad_input_is_typed(tmp_path):
    cases = [
        lambda: SharedMemoryPool("mysql://host/db"),
        lambda: SharedMemoryPool("pool.db"),
        lambda: SharedMemoryPool(max_results=0),
        lambda: SharedMemoryPool("sqlite://", table="x; DROP"),
    ]
    for case in cases:
        with pytest.raises(LightAgentError) as info:
            case()
        assert info.value.code == "LA-CONFIG"
    pool = SharedMemoryPool()
    for call, code in (
        (lambda: pool.store("", "u"), "LA-VALIDATION"),
        (lambda: pool.store("x", 7), "LA-VALIDATION"),
        (lambda: pool.store("x", "u", memory_id="m" * 300), "LA-VALIDATION"),
    ):
        with pytest.raises(LightAgentError) as info:
            call()
        assert info.value.code == code
    missing = SharedMemoryPool(f"sqlite:///{tmp_path / 'no' / 'such' / 'pool.db'}")
    with pytest.raises(LightAgentError) as info:
        missing.store("x", "u")
    assert info.value.code == "LA-STORAGE-NOT-FOUND"
    down = SharedMemoryPool("postgresql://postgres@127.0.0.1:1/none")
    with pytest.raises(LightAgentError) as info:
        down.retrieve("x", "u")
    assert info.value.code == "LA-STORAGE-UNAVAILABLE"


def test_a_missing_driver_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    pool = SharedMemoryPool("postgresql://postgres@127.0.0.1/test")
    with pytest.raises(LightAgentError) as info:
        pool.store("x", "u")
    assert info.value.code == "LA-MISSING-EXTRA" and "lightagent-core[postgres]" in info.value.hint


LAZY = r"""
import json, sys
import lightagent
from lightagent import SharedMemoryPool
SharedMemoryPool("postgresql://postgres@127.0.0.1/test")
SharedMemoryPool("sqlite:///never-opened.db")
print(json.dumps(sorted(m for m in ("psycopg", "sqlite3", "sqlalchemy") if m in sys.modules)))
"""


def test_drivers_load_on_first_use_only(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", LAZY], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
    assert not (tmp_path / "never-opened.db").exists()


WRITER = r"""
import sys
from lightagent import SharedMemoryPool
pool = SharedMemoryPool(sys.argv[1])
for i in range(int(sys.argv[3])):
    pool.store(f"note {i} from {sys.argv[2]}", "shared-user")
pool.close()
"""


def test_two_processes_write_one_sqlite_pool(tmp_path):
    url = f"sqlite:///{tmp_path / 'pool.db'}"
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), url, name, "40"])
        for name in ("one", "two")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    pool = SharedMemoryPool(url, max_results=100)
    assert len(pool) == 80
    found = texts(pool.retrieve("note from two", "shared-user", limit=100))
    assert len(found) == 80 and found[0].endswith("from two")
    assert os.path.exists(tmp_path / "pool.db")
