"""Hooks: ordering, replace chains, normalisation, isolation, retry/fallback (PolicyHook: lightagent-review)."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    HookContext,
    HookDecision,
    HookManager,
    LightAgent,
    ScriptedModel,
    tool,
)
from lightagent.errors import ConfigurationError
from lightagent.hooks import (
    AGENT_PHASES,
    ALL_PHASES,
    MEMORY_PHASES,
    normalize_hook_result,
)


def ctx(phase="before_tool_call", payload=None, **kw):
    return HookContext(phase=phase, payload=payload if payload is not None else {"x": 0}, **kw)


def test_phase_vocabularies():
    assert {"before_run", "after_run", "on_error", "on_handoff"} <= set(AGENT_PHASES)
    assert "before_memory_promote" in MEMORY_PHASES and len(MEMORY_PHASES) == 6
    assert "before_flow_step" not in ALL_PHASES  # LightFlow registers its phases itself
    assert {"input_guardrail", "tool_guardrail", "output_guardrail"} <= ALL_PHASES


@pytest.mark.parametrize(
    ("value", "action", "reason"),
    [
        (None, "continue", None),
        (True, "continue", None),
        (False, "block", "hook returned False"),
        ("nope", "block", "nope"),
        ({"allowed": False, "reason": "r"}, "block", "r"),
        ({"payload": {"a": 1}}, "replace", None),
        ({"action": "retry", "reason": "again"}, "retry", "again"),
        ({}, "continue", None),
    ],
)
def test_normalisation(value, action, reason):
    decision = normalize_hook_result(value)
    assert decision.action == action and decision.reason == reason


def test_invalid_actions_and_results_are_typed():
    with pytest.raises(ConfigurationError) as info:
        HookDecision("explode")
    assert info.value.code == "LA-HOOK-INVALID"
    with pytest.raises(ConfigurationError):
        normalize_hook_result({"action": "explode"})
    with pytest.raises(ConfigurationError):
        normalize_hook_result(42)
    with pytest.raises(ConfigurationError):
        HookManager([42])


def test_replace_chains_in_list_order_and_block_stops():
    seen = []

    def add(n):
        def hook(c):
            seen.append((n, c.payload["x"]))
            return HookDecision.replace({"x": c.payload["x"] + n})

        hook.__name__ = f"add{n}"
        return hook

    def stop(c):
        seen.append(("stop", c.payload["x"]))
        return "stop here"

    never = add(100)
    manager = HookManager([add(1), add(10), stop, never])
    decision = manager.run(ctx())
    assert decision.action == "block" and decision.reason == "stop here"
    assert seen == [(1, 0), (10, 1), ("stop", 11)]
    assert [e["action"] for e in decision.metadata["hook_events"]] == [
        "replace",
        "replace",
        "block",
    ]
    final = HookManager([add(1), add(2)]).run(ctx())
    assert final.action == "replace" and final.payload == {"x": 3}


def test_plain_hook_failure_is_isolated_and_traced():
    events = []

    def broken(c):
        raise ValueError("oops")

    manager = HookManager([broken, lambda c: HookDecision.replace({"x": 5})])
    decision = manager.run(ctx(emitter=lambda t, d: events.append((t, d))))
    assert decision.action == "replace" and decision.payload == {"x": 5}
    failure = decision.metadata["hook_events"][0]
    assert failure["action"] == "error" and failure["error_type"] == "ValueError"
    assert events[0][0] == "hook_decision" and events[0][1]["hook"] == "broken"


def test_object_hooks_with_phase_methods_and_async_hooks():
    class Audit:
        def __init__(self):
            self.phases = []

        def before_run(self, c):
            self.phases.append(c.phase)

    async def async_hook(c):
        await asyncio.sleep(0)
        return HookDecision.replace({"x": 9})

    audit = Audit()
    manager = HookManager([audit, async_hook])
    assert manager.run(ctx("before_run")).payload == {"x": 9}
    assert asyncio.run(manager.arun(ctx("before_run"))).payload == {"x": 9}
    assert manager.run(ctx("after_run")).payload == {"x": 9}
    assert audit.phases == ["before_run", "before_run"]
    assert manager.targets("before_run") and not manager.targets("output_guardrail")


# -- through the agent loop ----------------------------------------------------------------


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def test_retry_repeats_the_model_call_and_fallback_answers():
    tries = {"n": 0}

    def retry_once(c):
        if c.phase == "after_model_response" and tries["n"] == 0:
            tries["n"] += 1
            return HookDecision.retry("draft was bad")
        return None

    model = ScriptedModel(["bad draft", "good answer"])
    agent = LightAgent(model=model, hooks=[retry_once])
    assert agent.run("q") == "good answer"
    model.assert_exhausted()

    def fallback(c):
        if c.phase == "before_model_request":
            return HookDecision.fallback("cached answer")
        return None

    quiet = ScriptedModel([])
    agent = LightAgent(model=quiet, hooks=[fallback])
    assert agent.run("q") == "cached answer"
    assert quiet.requests == []


def test_async_run_uses_async_hooks():
    async def shout(c):
        if c.phase == "output_guardrail":
            return HookDecision.replace({"content": c.payload["content"].upper()})
        return None

    shout.phases = {"output_guardrail"}
    agent = LightAgent(model=ScriptedModel(["quiet"]), hooks=[shout])
    assert asyncio.run(agent.arun("q")) == "QUIET"
