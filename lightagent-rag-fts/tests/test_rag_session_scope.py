"""Session search finds only the caller's own sessions, on every store kind.

A session records its owner (user, and the tenant and project of the agent's security
context); a search through an agent is scoped to the run's owner the same way, the scope
is applied by the store before the ``max_sessions`` bound, and a search that names no
owner is refused unless the provider is the admin view (``require_owner=False``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, SecurityContext
from lightagent.errors import PolicyError
from lightagent.events import InMemorySessionStore, JsonlSessionStore, SqlSessionStore
from lightagent.events.manager import SessionManager
from lightagent_rag_fts import SessionSearchProvider
from lightagent_rag_fts.agent import RETRIEVAL_HEADER

ACME = SecurityContext(tenant_id="acme", project_id="p1")
ALICE = {"user_id": "alice", "tenant_id": "acme", "project_id": "p1"}


@pytest.fixture(
    params=["memory", "sqlite", "jsonl", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "memory":
        store: Any = InMemorySessionStore()
    elif request.param == "sqlite":
        store = SqlSessionStore(f"sqlite:///{tmp_path / 'sessions.db'}")
    elif request.param == "jsonl":
        store = JsonlSessionStore(tmp_path / "sessions")
    else:
        url = request.getfixturevalue("postgres_url")
        store = SqlSessionStore(url, table_prefix=f"s{uuid.uuid4().hex[:8]}_")
    yield store
    store.close()


def _alice_talks(store: Any, session_id: str = "alice-1") -> None:
    agent = LightAgent(model=ScriptedModel(["Noted."]), session_store=store, security_context=ACME)
    agent.run("my kiwi code is 4711", session_id=session_id, user_id="alice")


def _search_as(store: Any, user: str, context: SecurityContext | None) -> Any:
    """What the model gets back from the search tool, run by ``user`` under ``context``."""
    call = {"name": "search_knowledge", "arguments": {"query": "kiwi code"}}
    agent = LightAgent(
        model=ScriptedModel([{"tool_calls": [call]}, "ok"]),
        retrieval=SessionSearchProvider(store),
        security_context=context,
    )
    result = agent.run("find it", user_id=user, result_format="object")
    return json.loads(result.tool_calls[0]["output"])


def test_only_the_owner_finds_a_session_through_the_agent(store: Any) -> None:
    _alice_talks(store)
    own = _search_as(store, "alice", ACME)
    assert own and own[0]["citation"].startswith("session:alice-1:")
    # Another user of the same tenant and project, another tenant, and no tenant at all.
    assert _search_as(store, "bob", ACME) == []
    assert _search_as(store, "alice", SecurityContext(tenant_id="globex", project_id="p1")) == []
    assert _search_as(store, "alice", SecurityContext(tenant_id="acme", project_id="p2")) == []
    assert _search_as(store, "alice", None) == []


def test_injected_context_is_scoped_too(store: Any) -> None:
    _alice_talks(store)

    def system_prompt(user: str, context: SecurityContext | None) -> str:
        model = ScriptedModel(["ok"])
        agent = LightAgent(
            model=model,
            retrieval=SessionSearchProvider(store),
            retrieval_inject=3,
            security_context=context,
        )
        agent.run("kiwi code?", user_id=user)
        return str(model.requests[0].messages[0]["content"])

    assert "4711" in system_prompt("alice", ACME)
    for user, context in (("bob", ACME), ("alice", None)):
        prompt = system_prompt(user, context)
        assert "4711" not in prompt and RETRIEVAL_HEADER not in prompt


def test_a_search_naming_no_owner_fails_closed(store: Any) -> None:
    _alice_talks(store)
    with pytest.raises(PolicyError) as caught:
        SessionSearchProvider(store).search("kiwi code")
    assert caught.value.code == "LA-SESSION-OWNER" and caught.value.hint
    assert SessionSearchProvider(store).search("kiwi code", owner=ALICE)
    bob = {**ALICE, "user_id": "bob"}
    assert SessionSearchProvider(store).search("kiwi code", owner=bob) == []
    # The admin view (whoever holds the store) searches every session, as SessionManager does.
    assert SessionSearchProvider(store, require_owner=False).search("kiwi code")


def test_naming_a_session_does_not_bypass_the_owner(store: Any) -> None:
    _alice_talks(store)
    bob = {**ALICE, "user_id": "bob"}
    search = SessionSearchProvider(store)
    assert search.search("kiwi", owner=bob, session_id="alice-1") == []
    assert search.search("kiwi", owner=ALICE, session_id="alice-1")


def test_a_session_with_no_recorded_owner_is_not_found_by_a_scoped_search(store: Any) -> None:
    SessionManager(store).create("unowned")  # the admin view records no owner
    store.append("unowned", [{"type": "assistant.completed", "data": {"content": "kiwi code"}}])
    assert SessionSearchProvider(store).search("kiwi", owner=ALICE) == []
    assert SessionSearchProvider(store, require_owner=False).search("kiwi")


def test_the_session_bound_applies_after_the_scope(store: Any) -> None:
    _alice_talks(store)  # the oldest session
    globex = SessionManager(store, owner={"user_id": "carol", "tenant_id": "globex"})
    for i in range(12):
        session_id = globex.create(f"globex-{i}")
        store.append(
            session_id, [{"type": "assistant.completed", "data": {"content": "kiwi code"}}]
        )
    bounded = SessionSearchProvider(store, max_sessions=3)
    hits = bounded.search("kiwi code", owner=ALICE, limit=20)
    assert {h.document_id for h in hits} == {"alice-1"}
    call = {"name": "search_knowledge", "arguments": {"query": "kiwi code"}}
    agent = LightAgent(
        model=ScriptedModel([{"tool_calls": [call]}, "ok"]),
        retrieval=bounded,
        security_context=ACME,
    )
    result = agent.run("find it", user_id="alice", result_format="object")
    found = json.loads(result.tool_calls[0]["output"])
    assert found and {h["citation"].split(":")[1] for h in found} == {"alice-1"}


class PlainListing:
    """A third-party store whose ``list_sessions`` cannot list by owner (it wraps ours)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def list_sessions(self, *, limit: int = 100, offset: int = 0) -> Any:
        return self.inner.list_sessions(limit=limit, offset=offset)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_store_that_cannot_list_by_owner_is_scoped_before_the_bound(store: Any) -> None:
    _alice_talks(store)
    globex = SessionManager(store, owner={"user_id": "carol", "tenant_id": "globex"})
    for i in range(5):
        globex.create(f"globex-{i}")
        store.append(f"globex-{i}", [{"type": "turn.started", "data": {"content": "kiwi code"}}])
    search = SessionSearchProvider(PlainListing(store), max_sessions=2)
    assert {h.document_id for h in search.search("kiwi code", owner=ALICE)} == {"alice-1"}
    assert search.search("kiwi code", owner={**ALICE, "user_id": "bob"}) == []


@pytest.mark.parametrize(
    "bound",
    [{"max_sessions": -1}, {"max_events": -1}, {"max_sessions": "10"}, {"max_events": True}],
)
def test_a_bound_below_zero_or_not_an_int_is_a_config_error(bound: dict[str, Any]) -> None:
    # SQLite read LIMIT -1 as no bound at all, PostgreSQL failed with its own error
    from lightagent.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as info:
        SessionSearchProvider(InMemorySessionStore(), **bound)
    assert info.value.code == "LA-CONFIG" and info.value.details["parameter"] in bound
