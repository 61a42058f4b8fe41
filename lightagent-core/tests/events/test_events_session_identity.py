"""Every session API acts for a caller: tenant, project and user must match the owner.

Alice's agent runs in tenant ``acme``, project ``p1``. Agents of another tenant, another
project of the same tenant, or another user share the store and know the session and
run ids. Each of them is refused by every session API with ``LA-SESSION-OWNER`` — the
finished run's answer, the history, the export and the fork stay out of reach, and nothing
is written to the session. ``SessionManager(store)`` without an owner is the admin view.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, SecurityContext, tool
from lightagent.errors import PolicyError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqliteSessionStore

ANSWER = "the vault code is 7431"


class Crash(BaseException):
    """Stands in for the process dying inside a tool."""


@pytest.fixture(params=["sqlite", "jsonl"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteSessionStore(tmp_path / "s.db")
    return JsonlSessionStore(tmp_path / "sessions")


def _agent(store: Any, tenant: str | None, project: str | None, replies: list[Any]) -> LightAgent:
    context = SecurityContext(tenant_id=tenant, project_id=project) if tenant else None
    return LightAgent(
        model=ScriptedModel(replies), tools=[charge], session_store=store, security_context=context
    )


CRASHES: list[str] = []


@tool
def charge(item: str) -> str:
    """Charge for an item."""
    if CRASHES:
        CRASHES.pop()
        raise Crash()
    return f"charged {item}"


@pytest.fixture
def alice_runs(store):
    """A finished run and an interrupted run of alice's, in session "s"."""
    alice = _agent(
        store,
        "acme",
        "p1",
        [ANSWER, {"tool_calls": [{"name": "charge", "arguments": {"item": "a"}}]}, "done"],
    )
    finished = alice.run(
        "what is the code?", session_id="s", user_id="alice", result_format="object"
    )
    assert finished.content == ANSWER
    CRASHES.append("once")
    with pytest.raises(Crash):
        alice.run("charge a", session_id="s", user_id="alice")
    (interrupted,) = SessionManager(store).replay("s").incomplete_runs
    return alice, finished.run_id, interrupted


CALLERS = {
    "another tenant, same user id": ("globex", "p1", "alice"),
    "another project of the tenant": ("acme", "p2", "alice"),
    "another user of the project": ("acme", "p1", "mallory"),
    "no tenant at all": (None, None, "alice"),
}

APIS = {
    "resume a finished run": lambda a, r, u: a.resume(r["finished"], session_id="s", user_id=u),
    "aresume a finished run": lambda a, r, u: asyncio.run(
        a.aresume(r["finished"], session_id="s", user_id=u)
    ),
    "resume an interrupted run": lambda a, r, u: a.resume(
        r["interrupted"], session_id="s", user_id=u, approve=True
    ),
    "get_session": lambda a, r, u: a.get_session("s", user_id=u),
    "replay_session": lambda a, r, u: a.replay_session("s", user_id=u),
    "export_session": lambda a, r, u: a.export_session("s", r["path"], user_id=u),
    "fork_session": lambda a, r, u: a.fork_session(session_id="s", user_id=u),
    "checkpoint_session": lambda a, r, u: a.checkpoint_session("x", session_id="s", user_id=u),
    "compact_session": lambda a, r, u: a.compact_session(session_id="s", max_messages=0, user_id=u),
}


@pytest.mark.parametrize("api", list(APIS))
@pytest.mark.parametrize("caller", list(CALLERS))
def test_every_session_api_refuses_anyone_but_the_owner(store, alice_runs, tmp_path, api, caller):
    _, finished, interrupted = alice_runs
    tenant, project, user = CALLERS[caller]
    intruder = _agent(store, tenant, project, [])
    before = store.last_sequence("s")
    sessions = len(store.list_sessions())
    path = tmp_path / "out.jsonl"
    refs = {"finished": finished, "interrupted": interrupted, "path": path}
    with pytest.raises(PolicyError) as info:
        APIS[api](intruder, refs, user)
    assert info.value.code == "LA-SESSION-OWNER"
    assert ANSWER not in str(info.value.to_dict())
    # Nothing written: no claim, no checkpoint, no compaction, no fork, no export file.
    assert store.last_sequence("s") == before and len(store.list_sessions()) == sessions
    assert not path.exists()


@pytest.mark.parametrize("api", list(APIS))
def test_the_owner_may_use_every_session_api(store, alice_runs, tmp_path, api):
    alice, finished, interrupted = alice_runs
    refs = {"finished": finished, "interrupted": interrupted, "path": tmp_path / "out.jsonl"}
    outcome = APIS[api](alice, refs, "alice")
    if api.startswith(("resume a finished", "aresume")):
        assert outcome == ANSWER
    if api == "resume an interrupted run":
        assert outcome == "done"


def test_a_fork_belongs_to_the_owner_of_its_source(store, alice_runs):
    alice, _, _ = alice_runs
    fork = alice.fork_session(session_id="s", user_id="alice")
    assert alice.replay_session(fork, user_id="alice").event_count > 0
    stranger = _agent(store, "globex", "p1", [])
    with pytest.raises(PolicyError):
        stranger.replay_session(fork, user_id="alice")


def test_a_scoped_manager_checks_and_the_admin_view_does_not(store, alice_runs):
    scoped = SessionManager(store, owner={"user_id": "alice", "tenant_id": "globex"})
    with pytest.raises(PolicyError) as info:
        scoped.events("s")
    assert info.value.code == "LA-SESSION-OWNER" and "tenant" in info.value.message
    for name, call in {
        "replay": lambda: scoped.replay("s"),
        "history": lambda: scoped.history("s"),
        "trace": lambda: scoped.trace("s"),
        "model_request": lambda: scoped.model_request("s", 3),
        "delete": lambda: scoped.delete("s"),
    }.items():
        with pytest.raises(PolicyError):
            call()
        assert store.get_session("s") is not None, name
    owner = {"user_id": "alice", "tenant_id": "acme", "project_id": "p1"}
    assert len(SessionManager(store, owner=owner).replay("s").completed_turns) == 1
    # The admin view (no owner) reads everything, for whoever holds the store.
    assert SessionManager(store).replay("s").event_count == store.last_sequence("s")
    # A session created through a scoped manager records that owner.
    created = SessionManager(store, owner=owner).create("s2")
    assert SessionManager(store).events(created)[0].data["owner"] == owner
