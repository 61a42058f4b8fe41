"""Agent runs as GenAI spans, through the real openai SDK against the loopback server."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time

import pytest
from lightagent import LightAgent, tool
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


def agent_for(server, **kw) -> LightAgent:
    kw.setdefault("name", "calc")
    return LightAgent(model="gpt-4.1", api_key="test-key", base_url=server.base_url, **kw)


TOOL_THEN_ANSWER = (
    {
        "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    },
    {"content": "5", "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}},
)


def check_tool_run(traced, *, stream: bool) -> None:
    agent_span = traced.one("invoke_agent calc")
    chats = sorted(traced.named("chat "), key=lambda s: s.start_time)
    tool_span = traced.one("execute_tool add")
    assert len(chats) == 2
    assert traced.trace_ids() == {agent_span.context.trace_id}, "one trace per run"
    assert agent_span.parent is None
    for child in (*chats, tool_span):
        assert child.parent.span_id == agent_span.context.span_id
    a = agent_span.attributes
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.agent.name"] == "calc"
    assert a["gen_ai.provider.name"] == "generic"  # a local OpenAI-compatible server
    assert a["gen_ai.request.model"] == "gpt-4.1"
    assert a["gen_ai.usage.input_tokens"] == 31
    assert a["gen_ai.usage.output_tokens"] == 9
    assert a["lightagent.run_id"].startswith("run_")
    assert agent_span.kind is SpanKind.INTERNAL
    first = chats[0]
    assert first.name == "chat gpt-4.1"
    assert first.kind is SpanKind.CLIENT
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.provider.name"] == "generic"
    assert first.attributes["gen_ai.request.model"] == "gpt-4.1"
    assert first.attributes["gen_ai.response.model"] == "gpt-4.1"  # the server echoes it
    assert tuple(first.attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert first.attributes["gen_ai.usage.input_tokens"] == 11
    assert first.attributes["gen_ai.usage.output_tokens"] == 7
    assert tuple(chats[1].attributes["gen_ai.response.finish_reasons"]) == ("stop",)
    t = tool_span.attributes
    assert t["gen_ai.operation.name"] == "execute_tool"
    assert t["gen_ai.tool.name"] == "add"
    assert t["gen_ai.tool.call.id"].startswith("call_")
    assert t["gen_ai.tool.type"] == "function"
    # order on the timeline: model call, tool, model call, all inside the run
    assert chats[0].end_time <= tool_span.start_time <= tool_span.end_time <= chats[1].start_time
    assert agent_span.start_time <= chats[0].start_time and chats[1].end_time <= agent_span.end_time
    for span in traced.spans():
        assert span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("mode", ["run", "arun", "stream", "astream"])
def test_each_driver_writes_one_trace_of_agent_chat_and_tool_spans(
    loopback_server, traced, mode
) -> None:
    loopback_server.reply(*TOOL_THEN_ANSWER)
    agent = agent_for(loopback_server, tools=[add])
    if mode == "run":
        assert agent.run("2+3?") == "5"
    elif mode == "arun":
        assert asyncio.run(agent.arun("2+3?")) == "5"
    elif mode == "stream":
        list(agent.run("2+3?", stream=True))
    else:

        async def consume() -> None:
            async for _ in agent.astream("2+3?"):
                pass

        asyncio.run(consume())
    check_tool_run(traced, stream=mode in ("stream", "astream"))


def _reply_by_body(body: dict) -> dict:
    """Tool call first; once the tool answered, echo the run's tag as the answer."""
    messages = body["messages"]
    tag = next(m["content"] for m in messages if m["role"] == "user")
    if messages[-1]["role"] == "tool":
        return {"content": f"done {tag}"}
    time.sleep(0.01)  # let the runs interleave on the loop
    return {"tool_calls": [{"name": "add", "arguments": {"a": len(tag), "b": 1}}]}


def _check_runs_are_separate(traced, count: int) -> None:
    agents = traced.named("invoke_agent")
    assert len(agents) == count
    assert len({s.context.trace_id for s in agents}) == count
    by_span = {s.context.span_id: s for s in agents}
    for span in traced.spans():
        if span.name.startswith("invoke_agent"):
            continue
        parent = by_span[span.parent.span_id]  # every chat/tool span under an agent span ...
        assert span.context.trace_id == parent.context.trace_id  # ... of its own trace
    for agent_span in agents:
        kids = traced.children(agent_span)
        assert sorted(k.name.split()[0] for k in kids) == ["chat", "chat", "execute_tool"]


def test_concurrent_aruns_on_one_loop_never_share_a_parent(loopback_server, traced) -> None:
    loopback_server.default = _reply_by_body
    agent = agent_for(loopback_server, tools=[add])

    async def main() -> list[str]:
        return await asyncio.gather(*(agent.arun(f"job-{i}") for i in range(20)))

    answers = asyncio.run(main())
    assert sorted(answers) == sorted(f"done job-{i}" for i in range(20))
    _check_runs_are_separate(traced, 20)


def test_concurrent_runs_on_threads_and_streams_on_one_loop(loopback_server, traced) -> None:
    loopback_server.default = _reply_by_body
    agent = agent_for(loopback_server, tools=[add])
    threads = [threading.Thread(target=agent.run, args=(f"t-{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()

    async def stream(tag: str) -> None:
        async for _ in agent.astream(tag):
            await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(*(stream(f"s-{i}") for i in range(6)))

    asyncio.run(main())
    for thread in threads:
        thread.join()
    _check_runs_are_separate(traced, 12)


def test_model_failure_is_recorded_on_chat_and_agent_spans(loopback_server, traced) -> None:
    loopback_server.reply(loopback_server.error(400, {"error": {"message": "bad request"}}))
    agent = agent_for(loopback_server)
    result = agent.run("hi", result_format="object")
    assert result.error["code"] == "LA-400"
    chat = traced.one("chat ")
    run = traced.one("invoke_agent")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["error.type"] == "LA-400"
        assert [e.name for e in span.events] == ["exception"]
    assert chat.parent.span_id == run.context.span_id


def test_tool_failure_marks_only_its_tool_span(loopback_server, traced) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "explode", "arguments": {"reason": "x"}}]}, "sorry"
    )
    agent = agent_for(loopback_server, tools=[explode])
    assert agent.run("go") == "sorry"
    span = traced.one("execute_tool explode")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "LA-TOOL"
    assert traced.one("invoke_agent").status.status_code is StatusCode.UNSET


def test_parallel_tool_calls_each_end_when_they_return(loopback_server, traced) -> None:
    fast_finished = threading.Event()

    class FastFinished:
        """Hears the moment each tool call returns, as the tracing observer does."""

        wants_tool_finished = True

        def on_event(self, run, event) -> None:
            if event["type"] == "tool_finished" and event["data"]["name"] == "fast":
                fast_finished.set()

    @tool
    def slow() -> str:
        """Returns only once fast's return has been reported (bounded: were the two
        reported together at the round's end, the check below fails instead of hanging)."""
        fast_finished.wait(30)
        return "slow"

    @tool
    def fast() -> str:
        """Returns at once."""
        return "fast"

    loopback_server.reply(
        {"tool_calls": [{"name": "slow", "arguments": {}}, {"name": "fast", "arguments": {}}]},
        "both",
    )
    agent = agent_for(loopback_server, tools=[slow, fast], observers=[FastFinished()])
    assert agent.run("go") == "both"
    slow_span, fast_span = traced.one("execute_tool slow"), traced.one("execute_tool fast")
    assert fast_span.end_time < slow_span.end_time  # not both at the end of the round


def test_parent_trace_id_joins_the_parent_run_trace(loopback_server, traced) -> None:
    loopback_server.reply("first", "second", "third")
    first = agent_for(loopback_server, name="triage").run("a", result_format="object")
    agent_for(loopback_server, name="billing").run("b", parent_trace_id=first.trace_id)
    agent_for(loopback_server, name="other").run("c", parent_trace_id="trace_from_elsewhere")
    triage, billing = traced.one("invoke_agent triage"), traced.one("invoke_agent billing")
    assert billing.context.trace_id == triage.context.trace_id  # one trace per handoff chain
    assert billing.parent.span_id == triage.context.span_id
    other = traced.one("invoke_agent other")
    assert other.parent is None  # unknown here: a new trace that names the parent
    assert other.attributes["lightagent.parent_trace_id"] == "trace_from_elsewhere"


def test_a_run_nests_under_the_applications_current_span(loopback_server, traced) -> None:
    loopback_server.reply("hi")
    tracer = traced.provider.get_tracer("app")
    with tracer.start_as_current_span("handle request") as outer:
        agent_for(loopback_server).run("hello")
    run = traced.one("invoke_agent")
    assert run.parent.span_id == outer.get_span_context().span_id


def test_a_stream_dropped_midway_still_ends_its_spans(loopback_server, traced) -> None:
    loopback_server.reply("a long answer, streamed in many small pieces")
    agent = agent_for(loopback_server)
    stream = agent.run("talk", stream=True)
    next(iter(stream))
    del stream
    gc.collect()
    run = traced.one("invoke_agent")
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes["error.type"] == "abandoned"
    assert traced.instrumentor.observer.open_runs() == 0


def test_content_is_off_by_default(loopback_server, traced) -> None:
    loopback_server.reply(*TOOL_THEN_ANSWER)
    agent_for(loopback_server, tools=[add]).run("2+3? my key is sk-abcdefghijklmnopqrstuvwx")
    for span in traced.spans():
        for key in span.attributes:
            assert key not in {
                "gen_ai.input.messages",
                "gen_ai.output.messages",
                "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result",
                "gen_ai.tool.definitions",
            }
        assert "sk-abc" not in json.dumps(dict(span.attributes))


def test_content_when_on_is_in_genai_shape_and_redacted(loopback_server, traced_content) -> None:
    secret = "sk-abcdefghijklmnopqrstuvwx0123"
    loopback_server.reply(*TOOL_THEN_ANSWER)
    agent = agent_for(loopback_server, tools=[add], instructions="Be brief.")
    agent.run(f"2+3? my key is {secret}")
    dumped = json.dumps([dict(s.attributes) for s in traced_content.spans()])
    assert secret not in dumped and "[redacted]" in dumped
    chat = min(traced_content.named("chat "), key=lambda s: s.start_time)
    messages = json.loads(chat.attributes["gen_ai.input.messages"])
    assert messages[0]["role"] == "user"
    assert messages[0]["parts"][0]["type"] == "text"
    assert json.loads(chat.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    out = json.loads(chat.attributes["gen_ai.output.messages"])[0]
    assert out["finish_reason"] == "tool_calls"
    assert out["parts"][0] == {
        "type": "tool_call",
        "id": out["parts"][0]["id"],
        "name": "add",
        "arguments": {"a": 2, "b": 3},
    }
    tool_span = traced_content.one("execute_tool add")
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "5"
    run = traced_content.one("invoke_agent")
    final = json.loads(run.attributes["gen_ai.output.messages"])[0]
    assert final["parts"] == [{"type": "text", "content": "5"}]


def test_uninstrument_stops_new_spans(loopback_server, traced) -> None:
    loopback_server.reply("one", "two")
    agent = agent_for(loopback_server)
    agent.run("x")
    traced.instrumentor.uninstrument()
    agent.run("y")
    assert len(traced.named("invoke_agent")) == 1
    traced.instrumentor.instrument(tracer_provider=traced.provider)  # the fixture uninstruments


def test_instrument_without_a_provider_installs_none(loopback_server) -> None:
    from lightagent_otel import LightAgentInstrumentor

    before = trace.get_tracer_provider()
    loopback_server.reply("ok")
    instrumentor = LightAgentInstrumentor()
    instrumentor.instrument()
    try:
        assert agent_for(loopback_server).run("x") == "ok"
        assert trace.get_tracer_provider() is before  # no global provider was set
        assert type(before).__name__ == "ProxyTracerProvider"
    finally:
        instrumentor.uninstrument()
