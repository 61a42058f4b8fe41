"""A session belongs to the user (and tenant/project) of its first run; others are refused."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import LightAgent, ScriptedModel, SecurityContext, tool
from lightagent.errors import PolicyError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.resume import resume
from lightagent.events.sql_store import SqliteSessionStore


@pytest.fixture(params=["sqlite", "jsonl"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteSessionStore(tmp_path / "s.db")
    return JsonlSessionStore(tmp_path / "sessions")


def _texts(store, session_id):
    return repr([e.data for e in SessionManager(store).events(session_id)])


def _bob(agent, mode):
    kwargs = {"session_id": "s", "user_id": "bob"}
    if mode == "run":
        return agent.run("what is my PIN?", result_format="object", **kwargs).error["code"]
    if mode == "arun":
        result = asyncio.run(agent.arun("what is my PIN?", result_format="object", **kwargs))
        return result.error["code"]
    if mode == "str":
        return agent.run("what is my PIN?", **kwargs)
    if mode == "stream":
        chunks = agent.run("what is my PIN?", stream=True, **kwargs)
        return next(c for c in chunks if "code" in c)["code"]

    async def consume():
        out = []
        async for chunk in await agent.arun("what is my PIN?", stream=True, **kwargs):
            out.append(chunk)
        return out

    return next(c for c in asyncio.run(consume()) if "code" in c)["code"]


@pytest.mark.parametrize("mode", ["run", "arun", "str", "stream", "astream"])
def test_another_user_gets_nothing_and_writes_nothing(store, mode):
    model = ScriptedModel(["noted, alice", "your PIN is 1234"])
    agent = LightAgent(model=model, session_store=store)  # one agent serves both users
    assert agent.run("my PIN is 1234", session_id="s", user_id="alice") == "noted, alice"
    before = store.last_sequence("s")
    outcome = _bob(agent, mode)
    assert "LA-SESSION-OWNER" in outcome
    # Bob's question never reached the model or the log; Alice's history is intact.
    assert len(model.requests) == 1 and store.last_sequence("s") == before
    assert "what is my PIN" not in _texts(store, "s")
    assert agent.run("and my PIN?", session_id="s", user_id="alice") == "your PIN is 1234"
    assert "my PIN is 1234" in repr(model.requests[-1].messages)


def test_another_tenant_is_refused_even_for_the_same_user_id(store):
    def agent_of(tenant, replies):
        context = SecurityContext(tenant_id=tenant, project_id="p1")
        return LightAgent(
            model=ScriptedModel(replies), session_store=store, security_context=context
        )

    acme = agent_of("acme", ["hello"])
    assert acme.run("hi", session_id="s", user_id="u1") == "hello"
    globex = agent_of("globex", [])
    result = globex.run("hi", session_id="s", user_id="u1", result_format="object")
    assert result.error["code"] == "LA-SESSION-OWNER" and "tenant" in result.error["message"]
    # A run without any tenant is not the owner either: fail closed.
    bare = LightAgent(model=ScriptedModel([]), session_store=store)
    assert "LA-SESSION-OWNER" in bare.run("hi", session_id="s", user_id="u1")
    first = SessionManager(store).events("s")[0]
    assert first.data["owner"] == {"user_id": "u1", "tenant_id": "acme", "project_id": "p1"}


class Crash(BaseException):
    """Stands in for the process dying inside a tool."""


def test_resume_acts_for_the_user_of_the_run(store):
    crashes = ["once"]

    @tool
    def charge(item: str) -> str:
        """Charge for an item."""
        if crashes:
            crashes.pop()
            raise Crash()
        return f"charged {item}"

    script = [{"tool_calls": [{"name": "charge", "arguments": {"item": "a"}}]}, "done"]
    agent = LightAgent(model=ScriptedModel(script), tools=[charge], session_store=store)
    with pytest.raises(Crash):
        agent.run("charge a", session_id="s", user_id="alice")
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    before = store.last_sequence("s")
    # No user_id given: the resume acts for "default_user", as run() does, who is not alice.
    with pytest.raises(PolicyError) as info:
        resume(agent, run_id, session_id="s", approve=True)
    assert info.value.code == "LA-SESSION-OWNER" and store.last_sequence("s") == before
    assert resume(agent, run_id, session_id="s", approve=True, user_id="alice") == "done"
    # Naming another user is refused, and the finished run's answer is not handed out.
    other = LightAgent(model=ScriptedModel([]), tools=[charge], session_store=store)
    with pytest.raises(PolicyError) as info:
        resume(other, run_id, session_id="s", user_id="mallory")
    assert info.value.code == "LA-SESSION-OWNER" and "done" not in str(info.value)


def test_sessions_recorded_before_owners_stay_open(store):
    store.append("s", [{"type": "session.started", "data": {"metadata": {}}}])
    agent = LightAgent(model=ScriptedModel(["hi"]), session_store=store)
    assert agent.run("hello", session_id="s", user_id="anyone") == "hi"
