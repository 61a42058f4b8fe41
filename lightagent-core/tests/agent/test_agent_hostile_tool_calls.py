"""Tool calls an agent cannot serve never end the run: a call to a tool when the agent has
none, and arguments nested or sized beyond the documented limits. Each gets a typed error
for that one call, sent to the model, and the run goes on. Every driver mode, through the
real openai SDK against the loopback server."""

from __future__ import annotations

import asyncio
import json

import pytest
from lightagent import LightAgent, tool
from lightagent.models.arguments import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH

MODES = ["run", "run_object", "arun", "stream", "stream_events", "astream", "astream_events"]


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)


def drive(agent: LightAgent, mode: str, query: str = "go") -> tuple[str, list]:
    """Run ``agent`` in ``mode``; returns (the answer text, the streamed items)."""
    if mode == "run":
        return agent.run(query), []
    if mode == "run_object":
        result = agent.run(query, result_format="object")
        assert result.error is None, result.error
        return result.content, []
    if mode == "arun":
        return asyncio.run(agent.arun(query)), []
    if mode in ("stream", "stream_events"):
        events = mode == "stream_events"
        items = list(agent.run(query, stream=True, result_format="event" if events else "str"))
        return _streamed_text(items, events), items

    async def consume() -> list:
        fmt = "event" if mode == "astream_events" else "str"
        return [i async for i in agent.astream(query, result_format=fmt)]

    items = asyncio.run(consume())
    return _streamed_text(items, mode == "astream_events"), items


def _streamed_text(items: list, events: bool) -> str:
    if events:
        done = items[-1]
        assert done.type == "done" and done.data.get("error") is None, done.data
        return done.data["content"]
    return "".join(
        (i["choices"][0]["delta"].get("content") or "") for i in items if i.get("choices")
    )


def tool_messages(server, request: int = 1) -> list[str]:
    return [m["content"] for m in server.requests[request]["messages"] if m["role"] == "tool"]


# -- an agent with no tools -----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_call_to_an_agent_without_tools_is_a_typed_not_found(loopback_server, mode):
    calls = [
        {"name": "safe_expression", "arguments": {"expression": "1+1"}},
        {"name": "delete_everything", "arguments": {}},
    ]
    loopback_server.reply({"tool_calls": calls}, "I have no tools, so: 2.")
    agent = agent_for(loopback_server)
    text, _ = drive(agent, mode)
    assert text == "I have no tools, so: 2."
    assert "tools" not in loopback_server.requests[0]  # nothing was offered
    outputs = tool_messages(loopback_server)
    assert len(outputs) == 2
    assert all("LA-TOOL-NOT-FOUND" in out for out in outputs)
    assert "safe_expression" in outputs[0] and "delete_everything" in outputs[1]
    loopback_server.assert_exhausted()


def test_no_tools_not_found_counts_against_max_retry(loopback_server):
    call = {"tool_calls": [{"name": "ghost", "arguments": {}}]}
    loopback_server.reply(call, call)
    agent = agent_for(loopback_server)
    result = agent.run("go", result_format="object", max_retry=1, max_tool_iterations=5)
    assert result.error["code"] == "LA-TOOL-ARGS"  # the model kept calling what is not there
    assert "max_retry=1" in result.error["message"]


# -- arguments over the nesting and size limits -----------------------------------------------

RAN: list = []


@tool
def take(x: list) -> str:
    """Take a list."""
    RAN.append(x)
    return "taken"


@tool
def echo(text: str) -> str:
    """Echo text."""
    return f"echo: {text}"


def nested(depth: int) -> str:
    """An argument object whose ``x`` nests ``depth`` arrays (so the object is depth + 1)."""
    return '{"x": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("mode", MODES)
def test_deeply_nested_arguments_are_a_typed_error_for_that_call_only(loopback_server, mode):
    RAN.clear()
    calls = [
        {"name": "take", "arguments": nested(5000)},
        {"name": "echo", "arguments": {"text": "still runs"}},
    ]
    loopback_server.reply({"tool_calls": calls}, "recovered")
    agent = agent_for(loopback_server, tools=[take, echo])
    text, _ = drive(agent, mode)
    assert text == "recovered"
    deep, fine = tool_messages(loopback_server)
    assert deep.startswith("Error [LA-TOOL-ARGS]")
    assert f"deeper than {MAX_ARGUMENT_DEPTH} levels" in deep
    assert fine == "echo: still runs"
    assert RAN == []  # the tool never saw the arguments
    loopback_server.assert_exhausted()


@pytest.mark.parametrize("mode", ["run", "stream", "astream_events"])
def test_oversized_arguments_are_a_typed_error_for_that_call(loopback_server, mode):
    loopback_server.chunk_size = 65536  # one megabyte in 16-byte SSE pieces is just slow
    big = json.dumps({"text": "x" * (MAX_ARGUMENT_CHARS + 1)})
    loopback_server.reply({"tool_calls": [{"name": "echo", "arguments": big}]}, "ok")
    agent = agent_for(loopback_server, tools=[echo])
    text, _ = drive(agent, mode)
    assert text == "ok"
    (out,) = tool_messages(loopback_server)
    assert out.startswith("Error [LA-TOOL-ARGS]") and f"{MAX_ARGUMENT_CHARS:,}" in out
    assert len(json.dumps(loopback_server.requests[1])) < 100_000  # nothing carries the megabyte


def test_unusable_raw_arguments_are_kept_bounded_in_the_trace(loopback_server):
    big = json.dumps({"text": "x" * (MAX_ARGUMENT_CHARS + 1)})
    loopback_server.reply({"tool_calls": [{"name": "echo", "arguments": big}]}, "ok")
    agent = agent_for(loopback_server, tools=[echo])
    result = agent.run("go", result_format="object", trace=True)
    assert result.error is None
    assert len(json.dumps(result.trace, default=str)) < 100_000
    raw = result.tool_calls[0]["error"]["details"]["raw_arguments"]
    assert raw.startswith('{"text": "xxx') and "more characters not kept" in raw


def test_arguments_at_the_depth_limit_still_run(loopback_server):
    RAN.clear()
    loopback_server.reply(
        {"tool_calls": [{"name": "take", "arguments": nested(MAX_ARGUMENT_DEPTH - 1)}]},
        {"tool_calls": [{"name": "take", "arguments": nested(MAX_ARGUMENT_DEPTH)}]},
        "done",
    )
    agent = agent_for(loopback_server, tools=[take])
    assert agent.run("go") == "done"
    assert len(RAN) == 1  # depth 64 ran, depth 65 did not
    first = tool_messages(loopback_server, 1)[0]
    second = tool_messages(loopback_server, 2)[-1]
    assert first == "taken" and "LA-TOOL-ARGS" in second


@pytest.mark.parametrize(
    "arguments",
    [
        # JSON text inside a string, decoded for a list parameter
        json.dumps({"x": "[" * 5000 + "]" * 5000}),
        # a Python dict repr, repaired with literal_eval
        "{'x': " + "[" * 100 + "]" * 100 + "}",
        # JSON encoded twice
        json.dumps(nested(5000)),
        # inside a code fence
        "```json\n" + nested(5000) + "\n```",
    ],
    ids=["json-in-a-string", "python-repr", "double-encoded", "fenced"],
)
def test_every_argument_repair_path_keeps_the_limit(loopback_server, arguments):
    RAN.clear()
    loopback_server.reply({"tool_calls": [{"name": "take", "arguments": arguments}]}, "fine")
    agent = agent_for(loopback_server, tools=[take])
    assert agent.run("go") == "fine"
    (out,) = tool_messages(loopback_server)
    assert "LA-TOOL-ARGS" in out and "deeper than" in out
    assert RAN == []


def test_a_tool_call_written_as_text_keeps_the_limit(loopback_server):
    RAN.clear()
    content = '{"name": "take", "arguments": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    loopback_server.reply(content, "fine")
    agent = agent_for(loopback_server, tools=[take])
    assert agent.run("go") == "fine"
    (out,) = tool_messages(loopback_server)
    assert "LA-TOOL-ARGS" in out and "deeper than" in out


def test_a_deep_structured_answer_is_repaired_not_a_crash(loopback_server):
    from pydantic import BaseModel

    class Answer(BaseModel):
        a: int

    deep = nested(5000)
    loopback_server.reply(
        {"tool_calls": [{"name": "Answer", "arguments": deep}]},
        {"tool_calls": [{"name": "Answer", "arguments": {"a": 1}}]},
    )
    result = agent_for(loopback_server).run("go", output_schema=Answer, result_format="object")
    assert result.error is None and result.parsed == Answer(a=1)
    (out,) = tool_messages(loopback_server)
    assert "deeper than" in out


def test_deep_arguments_from_a_custom_model_and_into_a_session_log(tmp_path):
    """A Model that builds ToolCalls itself (no wire normalization) meets the same limit,
    and the run's events are written to SQLite and read back."""
    from lightagent import ScriptedModel, SqliteSessionStore

    RAN.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "take", "arguments": nested(5000)}]}, "ok"])
    store = SqliteSessionStore(str(tmp_path / "s.db"))
    agent = LightAgent(model=model, tools=[take], session_store=store)
    result = agent.run("go", result_format="object", session_id="s1")
    assert result.error is None and result.content == "ok"
    assert "LA-TOOL-ARGS" in result.tool_calls[0]["output"]
    assert RAN == []
    events = store.events("s1")
    done = next(e for e in events if e.type == "tool.completed")
    assert "LA-TOOL-ARGS" in json.dumps(done.to_dict())
    assert events[-1].type == "run.completed", [e.type for e in events]
