"""``list_sessions(owner=...)``: one owner's sessions, chosen by the store before the limit."""

from __future__ import annotations

from typing import Any

import pytest
from lightagent.errors import ValidationError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.sql_store import SqliteSessionStore

ALICE = {"user_id": "alice", "tenant_id": "acme", "project_id": "p1"}


@pytest.fixture(params=["memory", "sqlite", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "memory":
        made: Any = InMemorySessionStore()
    elif request.param == "sqlite":
        made = SqliteSessionStore(tmp_path / "s.db")
    else:
        made = JsonlSessionStore(tmp_path / "sessions")
    yield made
    made.close()


def _open(store: Any, session_id: str, owner: dict[str, str] | None) -> None:
    SessionManager(store, owner=owner).create(session_id, metadata={"topic": "t"})


def test_only_the_exact_owner_is_listed_and_the_limit_comes_after(store: Any) -> None:
    _open(store, "alice-old", ALICE)
    _open(store, "alice-new", ALICE)
    # Newer sessions of others: another user, tenant, project, no tenant, and no owner at all.
    _open(store, "bob", {**ALICE, "user_id": "bob"})
    _open(store, "globex", {**ALICE, "tenant_id": "globex"})
    _open(store, "p2", {**ALICE, "project_id": "p2"})
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
    assert len(store.list_sessions(limit=100)) == 12  # no owner: the admin view, as before


def test_an_owner_with_an_unknown_field_is_refused(store: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        store.list_sessions(owner={"user_id": "alice", "role": "admin"})
    assert caught.value.code == "LA-VALIDATION"


def test_a_first_event_holding_a_nul_is_stored_and_listed(store: Any) -> None:
    # PostgreSQL's jsonb has no \u0000: read for the owner index, it failed every write
    SessionManager(store, owner=ALICE).create("nul", metadata={"topic": "a\x00b"})
    _open(store, "plain", ALICE)
    listed = {info.session_id for info in store.list_sessions(owner=ALICE)}
    assert "plain" in listed
    assert store.events("nul")[0].data["metadata"] == {"topic": "a\x00b"}
