"""The PostgreSQL halves of the core's store scenarios: owner listing, damaged rows, lone
surrogates through a run, the URL form, a refused connection and the creation race.

The core runs each on its own stores (lightagent-core/tests/events); here the same checks
run on PostgreSQL.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.errors import StorageError, ValidationError
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqlSessionStore
from lightagent_contracts.loopback import LoopbackServer
from lightagent_postgres import PostgresDatabase, PostgresSessionStore

pytestmark = pytest.mark.postgres

ALICE = {"user_id": "alice", "tenant_id": "acme", "project_id": "p1"}


@pytest.fixture
def store(postgres_url: str) -> Any:
    made = PostgresSessionStore(postgres_url, table_prefix=f"o{uuid.uuid4().hex[:8]}_")
    yield made
    made.close()


def _open(store: Any, session_id: str, owner: dict[str, str] | None) -> None:
    SessionManager(store, owner=owner).create(session_id, metadata={"topic": "t"})


def test_only_the_exact_owner_is_listed_and_the_limit_comes_after(store: Any) -> None:
    _open(store, "alice-old", ALICE)
    _open(store, "alice-new", ALICE)
    _open(store, "bob", {**ALICE, "user_id": "bob"})
    _open(store, "globex", {**ALICE, "tenant_id": "globex"})
    _open(store, "no-tenant", {"user_id": "alice"})
    _open(store, "unowned", None)
    for i in range(5):
        _open(store, f"other-{i}", {"user_id": "carol", "tenant_id": "globex"})
    listed = store.list_sessions(owner=ALICE)
    assert {i.session_id for i in listed} == {"alice-old", "alice-new"}
    assert listed[0].metadata == {"topic": "t"} and listed[0].last_sequence == 1
    assert len(store.list_sessions(owner=ALICE, limit=1)) == 1
    assert [i.session_id for i in store.list_sessions(owner={"user_id": "alice"})] == ["no-tenant"]
    assert store.list_sessions(owner={**ALICE, "user_id": "dave"}) == []
    assert len(store.list_sessions(limit=100)) == 11
    with pytest.raises(ValidationError):
        store.list_sessions(owner={"user_id": "alice", "role": "admin"})


def test_a_first_event_with_an_escaped_nul_is_stored_and_has_no_indexed_owner(store: Any) -> None:
    # jsonb holds no NUL: the owner index reads NULL for such an event instead of failing it.
    store.append("nul", [{"type": "session.started", "data": {"note": "a\x00b"}}])
    assert store.events("nul")[0].data["note"] == "a\x00b"
    assert store.list_sessions(owner=ALICE) == []


@pytest.mark.parametrize("damage", ["delete", "garbage", "wrong-sequence"])
def test_a_damaged_row_is_never_skipped(store: Any, damage: str) -> None:
    store.append("s", [{"type": "n.e", "data": {"i": i}} for i in range(10)])
    table = store._tables[1]
    where = "WHERE session_id = 's' AND sequence = 5"
    with store._write() as cur:  # the store's own connection
        if damage == "delete":
            cur.execute(f"DELETE FROM {table} {where}")
        elif damage == "garbage":
            cur.execute(f"UPDATE {table} SET payload = %s {where}", ("{not json",))
        else:  # the payload of event 6 stored under sequence 5
            cur.execute(f"SELECT payload FROM {table} WHERE session_id = 's' AND sequence = 6")
            six = cur.fetchone()[0]
            cur.execute(f"UPDATE {table} SET payload = %s {where}", (six,))
    with pytest.raises(StorageError) as info:
        store.events("s")
    assert info.value.code == "LA-STORAGE-CORRUPT" and info.value.details["sequence"] == 5
    assert [e.data["i"] for e in store.events("s", limit=4)] == [0, 1, 2, 3]
    assert [e.sequence for e in store.events("s", after=5)] == [6, 7, 8, 9, 10]


def test_a_user_message_with_a_lone_surrogate_is_sent_and_stored(
    loopback_server: Any, store: Any
) -> None:
    loopback_server.reply("first answer", "answer with \ud800 in it", "third")
    agent = LightAgent(
        name="a", model="gpt-4.1", api_key="k", base_url=loopback_server.base_url,
        session_store=store,
    )  # fmt: skip
    assert agent.run("hello", session_id="s-1", result_format="object").error is None
    result = agent.run("and \udc00 this?", session_id="s-1", result_format="object")
    assert result.error is None, result.error
    assert agent.run("more", session_id="s-1", result_format="object").error is None
    history = [m.get("content") for m in loopback_server.requests[2]["messages"]]
    assert "and \ufffd this?" in history and "answer with \ufffd in it" in history
    text = json.dumps([e.data for e in store.events("s-1")], ensure_ascii=False)
    assert "and \ufffd this?" in text
    text.encode("utf-8")


@pytest.mark.parametrize("scheme", ["postgresql+psycopg", "postgresql", "postgres"])
def test_the_url_form_picks_the_postgres_store(postgres_url: str, scheme: str) -> None:
    url = postgres_url.replace("postgresql+psycopg", scheme, 1)
    agent = LightAgent(model=ScriptedModel(["ok"]), session_store=url)
    assert agent.run("x", session_id="s1") == "ok"
    bound = agent.session_binding.store
    assert isinstance(bound, PostgresSessionStore) and isinstance(bound, SqlSessionStore)
    assert isinstance(bound._db, PostgresDatabase)
    bound.close()


def test_a_run_names_a_refused_connection() -> None:
    # Nothing listens on port 1 of the loopback address: the connection is refused.
    store = SqlSessionStore("postgresql+psycopg://postgres@127.0.0.1:1/none")
    agent = LightAgent(model=ScriptedModel(["never sent"]), session_store=store)
    error = agent.run("hi", session_id="s", result_format="object").error
    assert error is not None and error["code"] == "LA-SESSION"
    assert "LA-STORAGE-UNAVAILABLE" in error["message"]
    assert "refused" in error["message"].lower()
    assert error["hint"] and "path or URL and its permissions" not in error["hint"]


def _run_after(
    barrier: threading.Barrier, results: dict, agent: Any, user: str, sid: str, questions: dict
) -> None:
    barrier.wait()  # both runs see the session empty
    results[user] = agent.run(questions[user], session_id=sid, user_id=user, result_format="object")


def test_the_loser_of_a_creation_race_is_refused_and_sees_nothing(postgres_url: str) -> None:
    prefix = f"r{uuid.uuid4().hex[:8]}_"
    with (
        LoopbackServer(default="noted, alice") as alice_model,
        LoopbackServer(default="noted, bob") as bob_model,
    ):
        models = {"alice": alice_model, "bob": bob_model}
        stores = {user: PostgresSessionStore(postgres_url, table_prefix=prefix) for user in models}
        agents = {
            user: LightAgent(
                model="m", base_url=models[user].base_url, api_key="k", session_store=stores[user]
            )
            for user in models
        }
        try:
            for n in range(5):
                sid = f"race-{n}"
                questions = {"alice": f"alice's PIN is {n}1234", "bob": f"bob asks {n} for a PIN"}
                barrier = threading.Barrier(2)
                results: dict[str, Any] = {}
                threads = [
                    threading.Thread(
                        target=_run_after,
                        args=(barrier, results, agents[user], user, sid, questions),
                    )
                    for user in agents
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(timeout=60)
                events = SessionManager(stores["alice"]).events(sid)
                owner = events[0].data["owner"]["user_id"]
                intruder = "bob" if owner == "alice" else "alice"
                assert results[owner].error is None, results[owner].error
                assert results[intruder].error["code"] == "LA-SESSION-OWNER"
                assert questions[intruder] not in repr([e.data for e in events])
        finally:
            for made in stores.values():
                made.close()
