"""SessionSearchProvider over real session stores (a SQLite file, JSONL files), fed by agent runs.

The matching is checked through the admin view (``require_owner=False``, every session);
test_rag_session_scope.py checks that a search finds only its owner's sessions.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.errors import ConfigurationError
from lightagent.events import JsonlSessionStore, SqlSessionStore
from lightagent_rag_fts import SessionSearchProvider


@pytest.fixture(params=["sqlite", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "sqlite":
        store = SqlSessionStore(f"sqlite:///{tmp_path / 'sessions.db'}")
    else:
        store = JsonlSessionStore(tmp_path / "sessions")
    yield store
    store.close()


def admin(store: Any, **options: Any) -> SessionSearchProvider:
    return SessionSearchProvider(store, require_owner=False, **options)


def _talk(store: Any, session_id: str, query: str, answer: str, user: str = "u1") -> None:
    agent = LightAgent(model=ScriptedModel([answer]), session_store=store)
    agent.run(query, session_id=session_id, user_id=user)


def test_events_are_found_case_insensitively_and_cited(store: Any) -> None:
    _talk(store, "s-1", "How do we RELEASE to production?", "We use Blue-Green releases.")
    _talk(store, "s-2", "What tea do you like?", "Sencha, mostly.")
    search = admin(store)
    hits = search.search("blue-green RELEASES")
    assert hits and hits[0].citation_id.startswith("session:s-1:")
    assert "Blue-Green" in hits[0].content
    seq = int(hits[0].citation_id.rsplit(":", 1)[1])
    assert store.events("s-1", after=seq - 1, limit=1)[0].type == hits[0].title
    assert [h.document_id for h in search.search("sencha")] == ["s-2"]
    assert search.search("zyxwvut") == []


def test_the_whole_phrase_ranks_above_scattered_words(store: Any) -> None:
    _talk(store, "scattered", "release notes", "the plan is green then blue")
    _talk(store, "phrase", "tell me", "blue green is the plan")
    hits = admin(store).search("blue green", limit=5)
    assert hits[0].document_id == "phrase"
    assert {h.document_id for h in hits} == {"phrase", "scattered"}


def test_filters_narrow_to_a_session_a_user_or_an_event_type(store: Any) -> None:
    _talk(store, "a", "kiwi question", "kiwi answer", user="alice")
    _talk(store, "b", "kiwi question", "kiwi answer", user="bob")
    search = admin(store)
    assert {h.document_id for h in search.search("kiwi", limit=20)} == {"a", "b"}
    assert {h.document_id for h in search.search("kiwi", limit=20, session_id="b")} == {"b"}
    assert {h.document_id for h in search.search("kiwi", limit=20, user_id="alice")} == {"a"}
    only = search.search("kiwi", limit=20, type="assistant.completed")
    assert only and all(h.title == "assistant.completed" for h in only)
    assert search.search("kiwi", limit=20, session_id="missing") == []


@pytest.mark.parametrize("query", ['"', "AND", "%", "\x00", "x" * 5000, "", "   "])
def test_odd_queries_are_plain_text(store: Any, query: str) -> None:
    _talk(store, "s", "hello", "world")
    assert isinstance(admin(store).search(query), list)


def test_the_limit_and_the_scan_are_bounded(store: Any) -> None:
    for i in range(4):
        _talk(store, f"s{i}", "otters everywhere", "otters indeed")
    assert len(admin(store).search("otters", limit=3)) == 3
    bounded = admin(store, max_sessions=1)
    assert len({h.document_id for h in bounded.search("otters", limit=20)}) == 1


def test_an_agent_searches_its_past_sessions_as_a_tool(store: Any) -> None:
    _talk(store, "old", "Where is the VPN config?", "In the ops wiki, page 42.")
    call = {"name": "search_knowledge", "arguments": {"query": "vpn config"}}
    agent = LightAgent(
        model=ScriptedModel([{"tool_calls": [call]}, "ok"]),
        retrieval=SessionSearchProvider(store),
    )
    result = agent.run("find it", user_id="u1", result_format="object")
    hits = json.loads(result.tool_calls[0]["output"])
    assert hits[0]["citation"].startswith("session:old:")


def test_a_non_store_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        SessionSearchProvider(object())
    assert caught.value.code == "LA-CONFIG"
