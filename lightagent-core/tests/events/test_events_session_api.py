"""Sessions with the real LightAgent: continuation, projection validity, replay, checkpoint, fork."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import StorageError, ValidationError
from lightagent.events.binding import SessionBinding
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.model import SessionEvent
from lightagent.events.projector import INTERRUPTED_RESULT, ContextProjector, trim_messages
from lightagent.events.sql_store import SqliteSessionStore


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(params=["memory", "jsonl", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield InMemorySessionStore()
    elif request.param == "jsonl":
        yield JsonlSessionStore(tmp_path / "sessions")
    else:
        s = SqliteSessionStore(tmp_path / "s.db")
        yield s
        s.close()


def _valid_for_provider(messages):
    """Each assistant tool_calls message is followed by exactly its results; no orphans."""
    i = 0
    while i < len(messages):
        m = messages[i]
        assert m["role"] != "tool", f"orphan tool message at {i}: {m}"
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            got = [x["tool_call_id"] for x in messages[i + 1 : i + 1 + len(ids)]]
            assert sorted(got) == sorted(ids), (ids, got)
            i += 1 + len(ids)
            continue
        i += 1


def test_run_continues_a_conversation(store):
    model = ScriptedModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "three", "still three"]
    )
    agent = LightAgent(model=model, tools=[add], session_store=store)
    assert agent.run("what is 1+2?", session_id="p42") == "three"
    assert agent.run("and again?", session_id="p42") == "still three"
    second = model.requests[-1].messages
    assert [m["role"] for m in second] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert second[3]["content"] == "3" and second[-1]["content"] == "and again?"
    _valid_for_provider(second[1:])
    replay = SessionManager(store).replay("p42")
    assert [
        len(t) for t in (replay.completed_turns, replay.incomplete_turns, replay.failed_turns)
    ] == [
        2,
        0,
        0,
    ]
    assert replay.last_event_type == "run.completed"
    model.assert_exhausted()


def test_async_run_records_and_loads_history(store):
    model = ScriptedModel(["first", "second"])
    agent = LightAgent(model=model, session_store=store)

    async def go():
        await agent.arun("one", session_id="s-async")
        return await agent.arun("two", session_id="s-async")

    assert asyncio.run(go()) == "second"
    assert [m["content"] for m in model.requests[-1].messages[1:]] == ["one", "first", "two"]


def test_exact_model_requests_are_rebuilt(store):
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
            {"tool_calls": [{"name": "add", "arguments": {"a": 3, "b": 4}}]},
            "done",
        ]
    )
    agent = LightAgent(model=model, tools=[add], session_store=store)
    agent.run("compute", session_id="req")
    manager = SessionManager(store)
    requested = [e for e in manager.events("req") if e.type == "model.requested"]
    assert len(requested) == 3
    assert "$base" in requested[2].data["request"]  # later requests store only the delta
    assert [e.step_id.rsplit(":", 1)[1] for e in requested] == ["1", "2", "3"]
    for event, sent in zip(requested, model.requests, strict=True):
        rebuilt = manager.model_request("req", event.sequence)
        assert rebuilt["messages"] == sent.messages
        assert rebuilt["tools"] == sent.tools


def test_trace_view_matches_the_run_trace(store):
    model = ScriptedModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 2}}]}, "four"]
    )
    agent = LightAgent(model=model, tools=[add], session_store=store)
    result = agent.run("2+2", session_id="tr", trace=True, result_format="object")
    view = SessionManager(store).trace("tr")
    assert [e["type"] for e in view] == [e["type"] for e in result.trace]
    for mine, theirs in zip(view, result.trace, strict=True):
        assert mine["trace_id"] == theirs["trace_id"] and mine["seq"] == theirs["seq"]
        assert json.loads(json.dumps(theirs["data"], default=str)) == mine["data"]


def _crashed_log(store, sid="crash"):
    """A run that asked for two tools, got one result, then died."""

    def call(i):
        return {"id": f"c{i}", "type": "function", "function": {"name": "add", "arguments": "{}"}}

    store.append(
        sid,
        [
            SessionEvent("session.started"),
            SessionEvent("turn.started", data={"query": "q1"}, run_id="r1", turn_id="r1"),
            SessionEvent(
                "model.requested",
                data={"request": {"messages": [{"role": "user", "content": "q1"}]}},
                run_id="r1",
                turn_id="r1",
            ),
            SessionEvent(
                "assistant.completed",
                data={
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [call(1), call(2)],
                    }
                },
                run_id="r1",
                turn_id="r1",
            ),
            SessionEvent(
                "tool.requested", data={"call_id": "c1", "name": "add"}, run_id="r1", turn_id="r1"
            ),
            SessionEvent(
                "tool.completed", data={"call_id": "c1", "output": "ok"}, run_id="r1", turn_id="r1"
            ),
            SessionEvent(
                "tool.requested", data={"call_id": "c2", "name": "add"}, run_id="r1", turn_id="r1"
            ),
            SessionEvent(
                "tool.completed",
                data={"call_id": "zz", "output": "orphan"},
                run_id="r1",
                turn_id="r1",
            ),
        ],
    )


def test_history_after_a_crash_is_provider_valid(store):
    _crashed_log(store)
    projection = ContextProjector().project(SessionManager(store).events("crash"))
    messages = projection.messages
    _valid_for_provider(messages)
    assert messages[-1] == {"role": "tool", "tool_call_id": "c2", "content": INTERRUPTED_RESULT}
    assert {r["repair"] for r in projection.repairs} == {"synthesized_result", "orphan_result"}
    replay = SessionManager(store).replay("crash")
    assert replay.incomplete_turns == ["r1"] and replay.incomplete_runs == ["r1"]
    # The next run on this session sends a valid history to the model.
    model = ScriptedModel(["recovered"])
    LightAgent(model=model, session_store=store).run("next", session_id="crash")
    sent = model.requests[0].messages
    _valid_for_provider(sent[1:])
    assert {"role": "tool", "tool_call_id": "c2", "content": INTERRUPTED_RESULT} in sent


def test_trim_never_splits_a_call_from_its_results():
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(3)
    ]
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": "r"} for i in range(3)),
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
    ]
    for keep in range(len(messages) + 1):
        trimmed = trim_messages(messages, keep)
        assert trimmed[0]["role"] == "system"
        _valid_for_provider(trimmed[1:])
        assert len(trimmed) - 1 <= keep
    with pytest.raises(ValidationError):
        trim_messages(messages, -1)
    binding = SessionBinding(InMemorySessionStore(), max_history_messages=2)
    assert binding.history("empty") == []


def test_checkpoint_and_fork_keep_lineage(store):
    model = ScriptedModel(["a1", "a2", "a3"])
    agent = LightAgent(model=model, session_store=store)
    manager = SessionManager(store)
    agent.run("q1", session_id="main")
    checkpoint = manager.checkpoint("main", "before-q2", metadata={"why": "test"})
    assert checkpoint["sequence"] == store.last_sequence("main") - 1
    agent.run("q2", session_id="main")
    fork_id = manager.fork("main", through_sequence=checkpoint.sequence, metadata={"branch": "b"})
    forked = manager.events(fork_id)
    source = manager.events("main")
    assert [e.type for e in forked[:-1]] == [e.type for e in source[: checkpoint.sequence]]
    assert all(f.parent_event_id == s.event_id for f, s in zip(forked[:-1], source, strict=False))
    assert forked[-1].type == "session.forked" and forked[-1].data["source_session_id"] == "main"
    assert manager.replay(fork_id).forked_from["through_sequence"] == checkpoint.sequence
    # The fork continues on its own.
    agent.run("q2 on the fork", session_id=fork_id)
    history = SessionBinding(store).history(fork_id)
    assert [m["content"] for m in history] == ["q1", "a1", "q2 on the fork", "a3"]
    assert manager.replay("main").checkpoints[0]["label"] == "before-q2"
    for bad in (0, 10_000, "3", True):
        with pytest.raises(ValidationError):
            manager.fork("main", through_sequence=bad)
    with pytest.raises(StorageError):
        manager.fork("no-such-session")
    with pytest.raises(StorageError):
        manager.checkpoint("no-such-session", "x")
    with pytest.raises(ValidationError):
        manager.checkpoint("main", "")


def test_export_and_create(store):
    manager = SessionManager(store)
    sid = manager.create(metadata={"owner": "ann"})
    with pytest.raises(StorageError) as info:
        manager.create(sid)
    assert info.value.code == "LA-STORAGE-CONFLICT"
    buffer = io.StringIO()
    assert manager.export(sid, buffer) == 1
    assert json.loads(buffer.getvalue())["data"]["metadata"] == {"owner": "ann"}
    assert store.get_session(sid).metadata == {"owner": "ann"}
    assert manager.delete(sid) and manager.replay(sid).event_count == 0


def test_failed_run_counts_as_failed(store):
    model = ScriptedModel([RuntimeError("provider down")])
    agent = LightAgent(model=model, session_store=store)
    result = agent.run("q", session_id="f", result_format="object")
    assert result.error is not None
    replay = SessionManager(store).replay("f")
    assert len(replay.failed_turns) == 1 and replay.last_event_type == "run.failed"


def test_importing_the_event_layer_stays_cheap():
    import subprocess
    import sys

    code = (
        "import sys, lightagent, lightagent.events\n"
        "from lightagent import SessionEvent, InMemorySessionStore, JsonlSessionStore, SqliteSessionStore\n"
        "from lightagent import summarize_trace, JsonlTraceExporter, ContextProjector, redact\n"
        "from lightagent.events import SessionManager, SessionBinding, resume\n"
        "heavy = [m for m in ('sqlalchemy', 'openai', 'httpx', 'psycopg') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_streamed_runs_are_recorded_too(store):
    model = ScriptedModel(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "three", "again"]
    )
    agent = LightAgent(model=model, tools=[add], session_store=store)
    for _ in agent.run("1+2?", session_id="st", stream=True):
        pass

    async def go():
        async for _ in await agent.arun("again?", session_id="st", stream=True):
            pass

    asyncio.run(go())
    assert len(SessionManager(store).replay("st").completed_turns) == 2
    sent = model.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]


def test_stores_by_name_have_defaults_and_build_without_side_effects(tmp_path, monkeypatch):
    from lightagent.events.binding import resolve_session_store

    monkeypatch.chdir(tmp_path)
    for name in ("memory", "jsonl", "sqlite"):
        resolve_session_store(name)
    assert list(tmp_path.iterdir()) == []  # nothing written until first use
    model = ScriptedModel(["hi"])
    LightAgent(model=model, session_store="sqlite").run("hello", session_id="named")
    assert (tmp_path / ".lightagent" / "sessions.sqlite3").exists()
    jsonl = resolve_session_store("jsonl")
    jsonl.append("named", [{"type": "a.b"}])
    assert (tmp_path / ".lightagent" / "sessions" / "named.jsonl").exists()


def test_concurrent_runs_on_one_session_keep_a_valid_log(store):
    import threading

    @tool
    def slow_add(a: int, b: int) -> int:
        """Add slowly."""
        import time

        time.sleep(0.02)
        return a + b

    def script(request):
        if request.messages[-1]["role"] == "user":  # a new question: use the tool first
            return {"tool_calls": [{"name": "slow_add", "arguments": {"a": 1, "b": 1}}]}
        return "two"

    agent = LightAgent(model=ScriptedModel(script), tools=[slow_add], session_store=store)
    errors = []

    def go(i):
        try:
            answer = agent.run(f"q{i}", session_id="busy")
            if answer != "two":  # str mode reports a failed run as its error text
                errors.append(answer)
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    events = SessionManager(store).events("busy")
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert sum(e.type == "session.started" for e in events) == 1
    replay = SessionManager(store).replay("busy")
    assert len(replay.completed_turns) == 4 and replay.incomplete_turns == []
    _valid_for_provider(SessionBinding(store).history("busy"))
