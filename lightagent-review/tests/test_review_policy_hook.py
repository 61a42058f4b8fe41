"""PolicyHook: typed bad input, fail-closed on exception, invalid result and timeout, phase filter."""

from __future__ import annotations

import asyncio
import threading

import pytest
from lightagent import HookContext, HookDecision, HookManager, LightAgent, ScriptedModel, tool
from lightagent.errors import ConfigurationError
from lightagent_review import PolicyHook


def ctx(phase="before_tool_call", payload=None, **kw):
    return HookContext(phase=phase, payload=payload if payload is not None else {"x": 0}, **kw)


def test_bad_policy_hooks_are_typed():
    with pytest.raises(ConfigurationError):
        PolicyHook(lambda c: None, phases={"before_tool_cal"})
    with pytest.raises(ConfigurationError):
        PolicyHook(lambda c: None, failure_mode="ignore")
    with pytest.raises(ConfigurationError):
        PolicyHook(lambda c: None, timeout=0)
    with pytest.raises(ConfigurationError):
        PolicyHook("not callable")


def test_policy_hook_fails_closed_on_exception_and_timeout_sync_and_async():
    def broken(c):
        raise RuntimeError("policy backend down")

    release = threading.Event()

    def slow(c):
        release.wait(0.5)  # longer than the timeout; short so the worker thread ends soon

    async def aslow(c):
        await asyncio.sleep(30)

    for hook in (
        PolicyHook(broken),
        PolicyHook(slow, timeout=0.05),
        PolicyHook(aslow, timeout=0.05),
    ):
        sync = HookManager([hook]).run(ctx())
        assert sync.action == "block", hook
        asynchronous = asyncio.run(HookManager([hook]).arun(ctx()))
        assert asynchronous.action == "block"
    timed = HookManager([PolicyHook(slow, timeout=0.05)]).run(ctx())
    assert "LA-HOOK-TIMEOUT" in timed.reason
    release.set()
    lenient = HookManager([PolicyHook(broken, failure_mode="continue")]).run(ctx())
    assert lenient.action == "continue"
    assert lenient.metadata["hook_events"][0]["failure_mode"] == "continue"
    invalid = HookManager([PolicyHook(lambda c: 42)]).run(ctx())
    assert invalid.action == "block"


def test_policy_hook_phase_filter():
    hook = PolicyHook(lambda c: "blocked", phases={"before_tool_call"})
    assert HookManager([hook]).run(ctx("before_run")).action == "continue"
    assert HookManager([hook]).run(ctx("before_tool_call")).action == "block"


# -- through the agent loop ----------------------------------------------------------------


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    raise AssertionError("must never run")


def test_seed_example_redact_and_block_through_agent():
    def redact_before_model(c):
        if c.phase != "before_model_request":
            return None
        params = dict(c.payload["params"])
        messages = list(params["messages"])
        messages[-1] = {
            **messages[-1],
            "content": messages[-1]["content"].replace("secret-token", "[REDACTED]"),
        }
        params["messages"] = messages
        return HookDecision.replace({"params": params})

    def block_dangerous_tool(c):
        if c.phase == "before_tool_call" and c.payload["tool_name"] == "delete_file":
            return HookDecision.block("delete_file requires manual approval")
        return None

    model = ScriptedModel(
        [{"tool_calls": [{"name": "delete_file", "arguments": {"path": "/x"}}]}, "cannot delete"]
    )
    agent = LightAgent(
        model=model,
        tools=[delete_file],
        hooks=[
            redact_before_model,
            PolicyHook(block_dangerous_tool, phases={"before_tool_call"}, timeout=2.0),
        ],
    )
    result = agent.run("Summarize this secret-token safely.", result_format="object", trace=True)
    assert result.content == "cannot delete" and result.error is None
    assert "secret-token" not in model.requests[0].messages[-1]["content"]
    denied = next(e for e in result.trace if e["type"] == "tool_result")["data"]["output"]
    assert "delete_file requires manual approval" in denied
    decisions = [e["data"] for e in result.trace if e["type"] == "hook_decision"]
    assert {"replace", "block"} <= {d["action"] for d in decisions}
    model.assert_exhausted()
