"""The S3 seams seen from the loop: phases, decisions, observers (a hand-written Interceptor)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.interceptors import Interceptor, PhaseOutcome, RunContext, RunObserver


class Rules:
    """An interceptor that answers from a {phase: outcome or fn(payload)} table and logs calls."""

    def __init__(self, **rules: Any) -> None:
        self.rules = rules
        self.calls: list[tuple[str, dict]] = []

    def on_phase_sync(self, run: RunContext, phase: str, payload: dict) -> PhaseOutcome:
        self.calls.append((phase, payload))
        rule = self.rules.get(phase)
        if callable(rule):
            rule = rule(payload)
        return rule or PhaseOutcome()

    async def on_phase(self, run: RunContext, phase: str, payload: dict) -> PhaseOutcome:
        return self.on_phase_sync(run, phase, payload)


def agent_with(rules: Rules, model: ScriptedModel, **kw: Any) -> LightAgent:
    agent = LightAgent(model=model, **kw)
    agent.interceptor = rules  # what build_interceptor(...) would produce
    return agent


@tool
def delete_all(scope: str) -> str:
    """Delete everything in scope."""
    raise AssertionError("must never run")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def test_protocols_are_runtime_checkable() -> None:
    assert isinstance(Rules(), Interceptor)

    class Obs:
        def on_event(self, run, event):
            pass

    assert isinstance(Obs(), RunObserver)


def test_phase_order_of_a_tool_run() -> None:
    rules = Rules()
    model = ScriptedModel([{"tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}]}, "done"])
    agent = agent_with(rules, model, tools=[lookup])
    assert agent.run("q") == "done"
    assert [p for p, _ in rules.calls] == [
        "before_run",
        "input_guardrail",
        "before_model_request",
        "tool_guardrail",  # the seeds' order: guardrails, then before_tool_call (issue 18)
        "before_tool_call",
        "after_tool_result",
        "before_model_request",
        "after_model_response",
        "output_guardrail",
        "after_run",
    ]
    payloads = dict(rules.calls)
    assert payloads["before_tool_call"] == {
        "tool_name": "lookup",
        "arguments": {"key": "a"},
        "call_id": payloads["before_tool_call"]["call_id"],
    }
    assert payloads["after_run"]["success"] is True


@pytest.mark.parametrize(
    "phase,code", [("input_guardrail", "LA-GUARDRAIL"), ("before_run", "LA-HOOK")]
)
def test_block_before_the_run_means_no_model_and_no_tool(phase: str, code: str) -> None:
    model = ScriptedModel(["never"])
    rules = Rules(**{phase: PhaseOutcome("block", reason="no PII please")})
    agent = agent_with(rules, model, tools=[delete_all])
    result = agent.run("my card is 4111", result_format="object", trace=True)
    assert result.error["code"] == code
    assert "no PII please" in result.error["message"]
    assert model.requests == []
    block_type = "guardrail_block" if code == "LA-GUARDRAIL" else "hook_block"
    assert block_type in [e["type"] for e in result.trace]
    assert agent.run("again").startswith(f"[{code}]")


def test_tool_guardrail_denies_one_call_and_the_run_goes_on() -> None:
    calls = {
        "tool_calls": [
            {"name": "delete_all", "arguments": {"scope": "prod"}},
            {"name": "lookup", "arguments": {"key": "k"}},
        ]
    }
    model = ScriptedModel([calls, "I could not delete, but k is known."])
    rules = Rules(
        tool_guardrail=lambda p: (
            PhaseOutcome("block", reason="destructive") if p["tool_name"] == "delete_all" else None
        )
    )
    agent = agent_with(rules, model, tools=[delete_all, lookup])
    result = agent.run("clean up", result_format="object", trace=True)
    assert result.success
    outputs = {c["name"]: c["output"] for c in result.tool_calls}
    assert "denied" in outputs["delete_all"] and "destructive" in outputs["delete_all"]
    assert outputs["lookup"] == "value of k"
    tool_messages = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 2
    assert any(
        e["type"] == "guardrail_block" and e["data"]["stage"] == "tool" for e in result.trace
    )


def test_replace_rewrites_arguments_output_and_answer() -> None:
    model = ScriptedModel(
        [{"tool_calls": [{"name": "lookup", "arguments": {"key": "secret"}}]}, "raw answer"]
    )
    rules = Rules(
        before_tool_call=PhaseOutcome("replace", payload={"arguments": {"key": "public"}}),
        after_tool_result=lambda p: PhaseOutcome(
            "replace", payload={"output": p["output"].upper()}
        ),
        output_guardrail=PhaseOutcome("replace", payload={"content": "[redacted]"}),
    )
    agent = agent_with(rules, model, tools=[lookup])
    result = agent.run("q", result_format="object")
    assert result.tool_calls[0]["output"] == "VALUE OF PUBLIC"
    assert result.content == "[redacted]"


def test_retry_and_fallback() -> None:
    model = ScriptedModel(["first try", "second try"])
    seen = []

    def after(payload):
        seen.append(payload["content"])
        return PhaseOutcome("retry") if len(seen) == 1 else None

    agent = agent_with(Rules(after_model_response=after), model)
    assert agent.run("q") == "second try"
    model = ScriptedModel([])
    agent = agent_with(
        Rules(before_model_request=PhaseOutcome("fallback", payload="cached answer")), model
    )
    assert agent.run("q") == "cached answer"
    assert model.requests == []


def test_retries_are_bounded_by_max_retry() -> None:
    model = ScriptedModel(default="again")
    agent = agent_with(Rules(after_model_response=PhaseOutcome("retry")), model)
    result = agent.run("q", max_retry=2, result_format="object")
    assert not result.success
    assert len(model.requests) == 3


def test_failing_interceptor_fails_closed() -> None:
    def boom(payload):
        raise RuntimeError("policy store down")

    model = ScriptedModel(["never"])
    agent = agent_with(Rules(input_guardrail=boom), model)
    result = agent.run("q", result_format="object")
    assert result.error["code"] == "LA-HOOK" and "policy store down" in result.error["message"]
    assert model.requests == []


def test_async_driver_uses_on_phase() -> None:
    class AsyncOnly(Rules):
        def on_phase_sync(self, run, phase, payload):
            raise AssertionError("the async driver must not call the sync form")

        async def on_phase(self, run, phase, payload):
            await asyncio.sleep(0)
            return Rules.on_phase_sync(self, run, phase, payload)

    rules = AsyncOnly(output_guardrail=PhaseOutcome("replace", payload={"content": "async ok"}))
    agent = agent_with(rules, ScriptedModel(["x"]))
    assert asyncio.run(agent.arun("q")) == "async ok"


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def on_event(self, run: RunContext, event: dict) -> None:
        self.events.append(event)


class Broken:
    def on_event(self, run: RunContext, event: dict) -> None:
        raise OSError("disk full")


class AsyncRecorder:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def on_event(self, run, event):
        raise AssertionError("the async driver awaits aon_event")

    async def aon_event(self, run, event):
        await asyncio.sleep(0)
        self.events.append(event)


def test_observers_see_every_event_and_failures_are_isolated() -> None:
    recorder = Recorder()
    model = ScriptedModel([{"tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}]}, "done"])
    agent = LightAgent(model=model, tools=[lookup], observers=[Broken(), recorder])
    result = agent.run("q", result_format="object")
    assert result.success and result.trace == []  # trace=False: nothing kept, observers still fed
    types = [e["type"] for e in recorder.events]
    assert types == [
        "run_start",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "model_request",
        "model_response",
        "run_end",
    ]
    tool_call = recorder.events[3]["data"]
    assert set(tool_call) >= {"call_id", "name", "arguments", "idempotency_key"}
    assert recorder.events[4]["data"]["call_id"] == tool_call["call_id"]
    assert recorder.events[1]["data"]["request"]["messages"][-1] == {"role": "user", "content": "q"}
    assert recorder.events[2]["data"]["message"]["tool_calls"][0]["id"] == tool_call["call_id"]


def test_async_observers_are_awaited() -> None:
    recorder = AsyncRecorder()
    agent = LightAgent(model=ScriptedModel(["hi"]), observers=[recorder])
    assert asyncio.run(agent.arun("q")) == "hi"
    assert [e["type"] for e in recorder.events] == [
        "run_start",
        "model_request",
        "model_response",
        "run_end",
    ]
