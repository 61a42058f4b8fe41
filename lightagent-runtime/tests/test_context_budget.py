"""Context budgets in the loop: trim, then summarize through the model, never separating a
tool call from its result or dropping the instructions and the first goal; an event in the
log, which is never rewritten. Against the loopback OpenAI-wire server."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import ConfigurationError, ContextBudget, ContextCompactor, LightAgent
from lightagent.events.projector import SUMMARY_PREFIX as PROJECTOR_PREFIX
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_runtime.context_steps import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX


def lookup(city: str) -> str:
    """Look up `city`."""
    return "R" * 3000


def agent_for(server, **kw) -> LightAgent:
    kw.setdefault("instructions", "You are the trip planner.")
    return LightAgent(model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)


def history() -> list[dict]:
    return [
        {"role": "user", "content": "GOAL: plan the trip to Rome"},
        {"role": "assistant", "content": "A" * 400},
        {"role": "user", "content": "B" * 400},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"city": "Rome"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "C" * 400},
        {"role": "assistant", "content": "D" * 400},
        {"role": "user", "content": "E" * 400},
        {"role": "assistant", "content": "F" * 400},
    ]


def assert_groups_whole(messages: list[dict]) -> None:
    """Every tool result follows the assistant message that called it."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            open_ids = {c["id"] for c in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_ids, messages
        else:
            open_ids = set()


def test_prefixes_agree() -> None:
    assert SUMMARY_PREFIX == PROJECTOR_PREFIX


def test_trim_then_summarize_through_the_model(loopback_server) -> None:
    loopback_server.reply("SUMMARY: A, B and the lookup said C.", "Here is the plan.")
    budget = ContextBudget(max_tokens=500, reserved_output_tokens=100)
    agent = agent_for(loopback_server, context_budget=budget)
    result = agent.run("and now?", history=history(), result_format="object", trace=True)
    assert result.content == "Here is the plan."
    summary_request, request = loopback_server.requests
    assert summary_request["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
    assert "A" * 400 in summary_request["messages"][1]["content"]
    sent = request["messages"]
    assert sent[0] == {"role": "system", "content": "You are the trip planner."}
    assert sent[1]["content"] == "GOAL: plan the trip to Rome"  # the first goal stays
    assert sent[2]["content"] == SUMMARY_PREFIX + "SUMMARY: A, B and the lookup said C."
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert_groups_whole(sent)
    assert budget.fits(sent)
    (event,) = [e["data"] for e in result.trace if e["type"] == "context_compacted"]
    assert event["stage"] == "summarize" and event["scope"] == "request"
    assert event["removed_count"] >= 2
    assert event["tokens_before"] > budget.available >= event["tokens_after"]
    # the summary call is not part of the transcript
    assert [e["type"] for e in result.trace].count("model_request") == 1


def test_own_summarizer_and_tool_groups_stay_whole(loopback_server) -> None:
    seen: list[list[dict]] = []

    def summarize(messages: list[dict]) -> str:
        seen.append(messages)
        return f"{len(messages)} earlier messages"

    loopback_server.reply("ok")
    budget = ContextBudget(max_tokens=420, reserved_output_tokens=20)
    agent = agent_for(
        loopback_server,
        context_budget=budget,
        context_compactor=ContextCompactor(summarizer=summarize),
    )
    assert agent.run("next?", history=history()) == "ok"
    assert len(loopback_server.requests) == 1  # no model call for the summary
    (removed,) = seen
    roles = [m["role"] for m in removed]
    if "tool" in roles:  # a dropped result went with its call
        assert roles[roles.index("tool") - 1] == "assistant"
    assert_groups_whole(loopback_server.requests[0]["messages"])


def test_big_tool_results_are_spilled_first(loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Rome"}}]}, "Sunny."
    )
    budget = ContextBudget(max_tokens=700, reserved_output_tokens=100)
    agent = agent_for(
        loopback_server,
        tools=[lookup],
        context_budget=budget,
        context_compactor=ContextCompactor(max_inline_tool_chars=400),
    )
    result = agent.run("weather in Rome?", result_format="object", trace=True)
    assert result.content == "Sunny."
    tool_message = loopback_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "tool-result:sha256:" in tool_message["content"]
    (event,) = [e["data"] for e in result.trace if e["type"] == "context_compacted"]
    assert event["stage"] == "trim" and event["removed_count"] == 0
    assert event["spilled"][0]["size"] == 3000 and "content" not in event["spilled"][0]


def test_instructions_that_cannot_fit_refuse_the_run(loopback_server) -> None:
    agent = agent_for(
        loopback_server,
        instructions="I" * 4000,
        context_budget=ContextBudget(max_tokens=200, reserved_output_tokens=10),
    )
    result = agent.run("hi", result_format="object", trace=True)
    assert result.error["code"] == "LA-BUDGET"
    assert result.error["details"]["dimension"] == "context_tokens"
    assert loopback_server.requests == []


def answer(body: dict) -> str:
    """A summary for a summary request, else a long answer."""
    if body["messages"][0]["content"] == SUMMARY_INSTRUCTIONS:
        return "short summary"
    return "reply " + "W" * 400


def test_async_run_and_the_log_is_never_rewritten(loopback_server, tmp_path) -> None:
    db = tmp_path / "ctx.sqlite3"
    budget = ContextBudget(max_tokens=500, reserved_output_tokens=100)
    agent = agent_for(loopback_server, session_store=SqliteSessionStore(db), context_budget=budget)
    loopback_server.default = answer
    assert agent.run("GOAL: plan the trip to Rome", session_id="s").startswith("reply")
    for letter in "XYZ":
        asyncio.run(agent.arun(letter * 600, session_id="s"))
    summaries = [
        r for r in loopback_server.requests if r["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
    ]
    assert summaries  # the context did not fit: it was compacted through the model
    for request in loopback_server.requests:
        if request not in summaries:
            assert budget.fits(request["messages"])
            assert request["messages"][1]["content"] == "GOAL: plan the trip to Rome"
    events = SqliteSessionStore(db).events("s")
    compacted = [e for e in events if e.type == "context.compacted"]
    assert compacted and all(e.data["scope"] == "request" for e in compacted)
    # without a budget the full history comes back: the compaction only shaped requests
    plain = agent_for(loopback_server, session_store=SqliteSessionStore(db))
    plain.run("last", session_id="s")
    sent = loopback_server.requests[-1]["messages"]
    assert sum(1 for m in sent if m["role"] == "user") == 5
    assert not any(SUMMARY_PREFIX in (m.get("content") or "") for m in sent)


def test_bad_context_settings_are_config_errors() -> None:
    # a compactor alone is allowed since issue 28: it acts on a provider's overflow error
    LightAgent(model="gpt-4.1", api_key="k", context_compactor=ContextCompactor())
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model="gpt-4.1", api_key="k", context_compactor="x")
    assert "ContextCompactor" in info.value.hint
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model="gpt-4.1", api_key="k", context_budget=8192)
    assert info.value.code == "LA-CONFIG" and info.value.hint
    with pytest.raises(ConfigurationError):
        LightAgent(
            model="gpt-4.1", api_key="k", context_budget=ContextBudget(), context_compactor="x"
        )
