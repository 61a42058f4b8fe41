"""The interceptor driven directly through seam S3 (sync and async), and build_interceptor's input checks."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    ApprovalDecision,
    HookDecision,
    InMemoryReviewStore,
    PolicyDecision,
    PolicyEngine,
)
from lightagent.errors import ConfigurationError
from lightagent.interceptors import Interceptor, PhaseOutcome, RunContext
from lightagent_control.interceptor import ControlInterceptor, build_interceptor


def run_ctx(**kw) -> RunContext:
    return RunContext(run_id="run-1", trace_id="trace-1", agent_name="agent", record=True, **kw)


def both(interceptor, run, phase, payload) -> tuple[PhaseOutcome, PhaseOutcome]:
    sync = interceptor.on_phase_sync(run, phase, dict(payload))
    asynchronous = asyncio.run(interceptor.on_phase(run, phase, dict(payload)))
    return sync, asynchronous


def test_nothing_given_is_the_fast_path_and_bad_input_is_typed():
    assert build_interceptor() is None
    assert build_interceptor(hooks=[], approval=False) is None
    assert isinstance(build_interceptor(hooks=[lambda c: None]), Interceptor)
    with pytest.raises(ConfigurationError):
        build_interceptor(approval=42)
    with pytest.raises(ConfigurationError):
        build_interceptor(policy_engine=object())
    with pytest.raises(ConfigurationError):
        build_interceptor(hooks=[object()])


def test_policy_list_and_actions_sync_and_async():
    def policy(request):
        if request.arguments.get("n", 0) > 10:
            return PolicyDecision.rewrite({"n": 10})
        if request.arguments.get("n") == -1:
            return "negative"
        return None

    interceptor = build_interceptor(policy_engine=[policy])
    run = run_ctx()
    for out in both(
        interceptor,
        run,
        "tool_guardrail",
        {"tool_name": "t", "arguments": {"n": 50}, "call_id": "c"},
    ):
        assert out.action == "replace" and out.payload["arguments"] == {"n": 10}
    for out in both(
        interceptor,
        run,
        "tool_guardrail",
        {"tool_name": "t", "arguments": {"n": -1}, "call_id": "c"},
    ):
        assert (
            out.action == "block"
            and out.reason == "negative"
            and out.metadata["code"] == "LA-POLICY"
        )
    for out in both(interceptor, run, "before_run", {"query": "q"}):
        assert out.action == "continue"


def test_require_approval_from_a_hook_goes_to_the_approval_store_and_resumes():
    store = InMemoryReviewStore()

    def needs_human(ctx):
        if ctx.phase == "before_tool_call":
            return HookDecision.require_approval("looks risky")

    interceptor = build_interceptor(hooks=[needs_human], approval=store)
    payload = {"tool_name": "wire", "arguments": {"to": "x"}, "call_id": "c1"}
    first = interceptor.on_phase_sync(run_ctx(), "before_tool_call", payload)
    assert first.action == "block" and first.metadata["code"] == "LA-APPROVAL-PENDING"
    (pending,) = store.list_pending()
    assert pending.reason == "looks risky"
    store.resolve(pending.request_id, ApprovalDecision.approve())
    resumed = run_ctx(approval_id=pending.request_id)
    ok = asyncio.run(interceptor.on_phase(resumed, "before_tool_call", payload))
    assert ok.action == "continue"
    again = asyncio.run(
        interceptor.on_phase(run_ctx(approval_id=pending.request_id), "before_tool_call", payload)
    )
    assert again.action == "block" and "LA-APPROVAL-REPLAY" in again.reason


def test_required_approval_without_approval_configured_is_denied():
    interceptor = build_interceptor(
        policy_engine=PolicyEngine([lambda r: PolicyDecision.approval("big")])
    )
    out = interceptor.on_phase_sync(
        run_ctx(), "tool_guardrail", {"tool_name": "t", "arguments": {}, "call_id": "c"}
    )
    assert out.action == "block" and out.metadata["code"] == "LA-APPROVAL"


def test_fallback_payload_is_text_and_state_is_per_run():
    def fallback(ctx):
        if ctx.phase == "before_model_request":
            return HookDecision.fallback({"content": "cached"})
        ctx.state["seen"] = ctx.state.get("seen", 0) + 1

    interceptor = build_interceptor(hooks=[fallback])
    out = interceptor.on_phase_sync(run_ctx(), "before_model_request", {"params": {}})
    assert out.action == "fallback" and out.payload == "cached"
    one, two = run_ctx(), run_ctx()
    interceptor.on_phase_sync(one, "before_run", {})
    interceptor.on_phase_sync(one, "before_run", {})
    interceptor.on_phase_sync(two, "before_run", {})
    assert interceptor._state(one)["seen"] == 2 and interceptor._state(two)["seen"] == 1


def test_decisions_are_events_on_the_run():
    run = run_ctx()
    interceptor = ControlInterceptor(
        hooks=[lambda c: HookDecision.block("no") if c.phase == "before_run" else None],
        input_guardrails=[lambda v, c: "bad input" if "x" in v else None],
    )
    interceptor.on_phase_sync(run, "before_run", {"query": "q"})
    interceptor.on_phase_sync(run, "input_guardrail", {"query": "x"})
    kinds = [(e["type"], e["data"].get("hook"), e["data"].get("action")) for e in run.trace]
    assert ("hook_decision", "<lambda>", "block") in kinds
    assert ("hook_decision", "input_guardrails", "block") in kinds


def test_guardrails_and_hooks_by_registered_name():
    from lightagent import LightAgent, ScriptedModel
    from lightagent.errors import PluginError

    pytest.importorskip("lightagent_guardrails")
    from lightagent.plugins import get_registry

    if ("guardrail", "privacy_input") not in get_registry():
        pytest.skip("the lightagent-guardrails plugin is not loaded in this environment")
    model = ScriptedModel([])
    agent = LightAgent(model=model, input_guardrails=["privacy_input"])
    assert agent.run("ssn 123-45-6789", result_format="object").error["code"] == "LA-GUARDRAIL"
    interceptor = build_interceptor(
        tool_guardrails=[("sensitive_tool_confirmation", {"tool_names": ["pay"]})],
        hooks=["tool_output_screen"],
    )
    out = interceptor.on_phase_sync(
        run_ctx(), "tool_guardrail", {"tool_name": "pay", "arguments": {}, "call_id": "c"}
    )
    assert out.action == "block"
    with pytest.raises(ConfigurationError):
        build_interceptor(tool_guardrails=["sensitive_tool_confirmation"])
    with pytest.raises(PluginError):
        build_interceptor(input_guardrails=["no_such_guardrail"])
