"""Guardrails on the loop: input blocks before any work, tool guardrails deny one call, output redaction."""

from __future__ import annotations

import asyncio
import re

import pytest
from lightagent import GuardrailDecision, LightAgent, ScriptedModel, tool
from lightagent.errors import ConfigurationError
from lightagent_control.interceptor import build_interceptor
from lightagent_guardrails import GuardrailManager, normalize_guardrail_result

RUNS: list[str] = []


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    RUNS.append(key)
    return f"value of {key}"


def no_secrets(value, ctx):
    return "secrets are not allowed" if "password" in value else None


def redact_digits(value, ctx):
    return GuardrailDecision.allow(re.sub(r"\d", "#", value)) if re.search(r"\d", value) else None


redact_digits.incremental = True


def test_input_guardrail_block_means_zero_model_calls_and_zero_tool_runs():
    RUNS.clear()
    model = ScriptedModel([])
    agent = LightAgent(model=model, tools=[lookup], input_guardrails=[no_secrets])
    result = agent.run("my password is hunter2", result_format="object", trace=True)
    assert result.error["code"] == "LA-GUARDRAIL"
    assert model.requests == [] and RUNS == []
    assert any(e["type"] == "guardrail_block" for e in result.trace)
    decision = next(e for e in result.trace if e["type"] == "hook_decision")["data"]
    assert decision["hook"] == "input_guardrails" and decision["guardrail"] == "no_secrets"


def test_tool_guardrail_denies_one_call_and_the_run_goes_on():
    RUNS.clear()

    def deny_b(value, ctx):
        if value["arguments"].get("key") == "b":
            return GuardrailDecision.block("key b is off limits")
        return None

    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "lookup", "arguments": {"key": "a"}},
                    {"name": "lookup", "arguments": {"key": "b"}},
                ]
            },
            "done",
        ]
    )
    agent = LightAgent(model=model, tools=[lookup], tool_guardrails=[deny_b])
    result = agent.run("q", result_format="object", trace=True)
    assert result.content == "done" and result.error is None
    assert RUNS == ["a"]
    tool_messages = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert "value of a" in tool_messages[0]["content"]
    assert "key b is off limits" in tool_messages[1]["content"]


def test_tool_guardrail_rewrites_arguments():
    RUNS.clear()

    def lower(value, ctx):
        return {"allowed": True, "value": {"key": value["arguments"]["key"].lower()}}

    model = ScriptedModel(
        [{"tool_calls": [{"name": "lookup", "arguments": {"key": "LOUD"}}]}, "ok"]
    )
    LightAgent(model=model, tools=[lookup], tool_guardrails=[lower]).run("q")
    assert RUNS == ["loud"]


def test_output_guardrail_redacts_sync_async_and_stream():
    agent = LightAgent(
        model=ScriptedModel(["call 555 1234 now", "call 555 1234 now"]),
        output_guardrails=[redact_digits],
    )
    assert agent.run("q") == "call ### #### now"
    assert asyncio.run(agent.arun("q")) == "call ### #### now"


def test_guardrail_that_raises_fails_closed():
    def broken(value, ctx):
        raise RuntimeError("classifier offline")

    model = ScriptedModel([])
    result = LightAgent(model=model, input_guardrails=[broken]).run("hello", result_format="object")
    assert result.error["code"] == "LA-GUARDRAIL"
    assert model.requests == []


def test_guardrail_results_normalise_and_bad_ones_are_typed():
    assert normalize_guardrail_result(None).allowed
    assert not normalize_guardrail_result(False).allowed
    assert normalize_guardrail_result("no").reason == "no"
    assert normalize_guardrail_result({"allowed": True, "value": 3}).value == 3
    with pytest.raises(ConfigurationError):
        normalize_guardrail_result(3.5)
    with pytest.raises(ConfigurationError):
        GuardrailManager(input_guardrails=["not callable"])
    manager = GuardrailManager(input_guardrails=[lambda v: 42])
    assert not manager.check_input("x").allowed  # an unreadable answer blocks


def test_seed_method_names():
    manager = GuardrailManager(
        input_guardrails=[no_secrets],
        tool_guardrails=[lambda v, c: v["tool_name"] != "rm"],
        output_guardrails=[redact_digits],
    )
    assert not manager.check_input("password 1").allowed
    assert not manager.check_tool("rm", {}).allowed
    assert manager.check_output("a1").value == "a#"


class _Run:
    """A minimal run for driving the interceptor directly (a real RunContext is used elsewhere)."""

    def __init__(self):
        from lightagent.interceptors import RunContext

        self.ctx = RunContext(run_id="r", trace_id="t", agent_name="a", record=True)


def test_output_screen_releases_clean_text_and_holds_flagged_text():
    interceptor = build_interceptor(output_guardrails=[redact_digits])
    assert interceptor.streams_output_guardrails
    screen = interceptor.output_screen(_Run().ctx)
    shown = screen.feed("This sentence is perfectly clean and long enough to release. ")
    assert shown.startswith("This sentence is perfectly clean")
    assert screen.feed("Your code is 4242") == ""
    assert screen.feed(" and more text follows here. The end.\n") == ""  # flagged: held
    final = "This sentence is perfectly clean and long enough to release. Your code is #### and more text follows here. The end.\n"
    rest = screen.rest(final)
    assert shown + rest == final and "4242" not in rest


def test_output_screen_holds_everything_for_non_incremental_guardrails():
    interceptor = build_interceptor(output_guardrails=[no_secrets])
    screen = interceptor.output_screen(_Run().ctx)
    assert screen.hold_all
    assert screen.feed("Plenty of clean text here. And more clean text to come. ") == ""
    assert screen.rest("ok") == "ok"
    assert build_interceptor(hooks=[lambda c: None]).output_screen(_Run().ctx) is None


def test_streaming_agent_never_shows_unredacted_text():
    model = ScriptedModel(
        ["Fine first sentence that is clean. Then the secret 123456 appears. Bye."], chunk_size=4
    )
    agent = LightAgent(model=model, output_guardrails=[redact_digits])
    pieces = []
    for item in agent.run("q", stream=True):
        if isinstance(item, dict):
            for choice in item.get("choices", ()):
                pieces.append((choice.get("delta") or {}).get("content") or "")
    text = "".join(pieces)
    assert "123456" not in text and "######" in text


def test_async_streaming_agent_never_shows_unredacted_text():
    model = ScriptedModel(
        ["Clean opening sentence for the stream. Secret 987654 here. Bye."], chunk_size=3
    )
    agent = LightAgent(model=model, output_guardrails=[redact_digits])

    async def collect():
        pieces = []
        async for item in agent.astream("q"):
            if isinstance(item, dict):
                for choice in item.get("choices", ()):
                    pieces.append((choice.get("delta") or {}).get("content") or "")
        return "".join(pieces)

    text = asyncio.run(collect())
    assert "987654" not in text and "######" in text and text.startswith("Clean opening")
