"""Flow hooks: before/after_flow_step, on_approval_required; the seeds' normalisation; fail-closed policy hooks."""

from __future__ import annotations

from typing import Any

import pytest
from lightagent_flow import LightFlow
from lightagent_flow.hooks import FlowHookDecision, normalize


def _two_steps(recorder: Any, hooks: list[Any], **options: Any) -> LightFlow:
    return (
        LightFlow(hooks=hooks, **options)
        .step("a", agent=recorder.agent("a", "A"))
        .step("b", agent=recorder.agent("b", "B"), depends_on="a")
    )


def test_before_flow_step_can_block_a_step(recorder: Any, flow_executor: Any) -> None:
    def gate(ctx: Any) -> Any:
        if ctx.phase == "before_flow_step" and ctx.step_name == "b":
            return "b is frozen"
        return None

    result = _two_steps(recorder, [gate], executor=flow_executor).run("q", trace=True)
    assert result.steps["a"].status == "success"
    assert result.steps["b"].status == "failed" and result.steps["b"].error_code == "LA-HOOK"
    assert "b is frozen" in result.steps["b"].error
    assert recorder.count("b") == 0
    blocks = [e for e in result.trace if e["type"] == "hook_block"]
    assert blocks and blocks[0]["data"]["phase"] == "before_flow_step"


def test_before_flow_step_replace_rewrites_the_query_and_sees_context(
    recorder: Any, flow_executor: Any
) -> None:
    seen: list[Any] = []

    def rewrite(ctx: Any) -> Any:
        if ctx.phase != "before_flow_step":
            return None
        seen.append((ctx.step_name, ctx.run_id, sorted(ctx.payload)))
        return {"payload": {"query": ctx.payload["query"].upper()}}

    result = _two_steps(recorder, [rewrite], executor=flow_executor).run("hello", run_id="hooks-1")
    assert result.success
    assert dict(recorder.calls)["a"] == "HELLO"
    assert seen[0] == ("a", "hooks-1", ["context", "query", "run_id", "step"])


def test_after_flow_step_replace_and_block(recorder: Any) -> None:
    class Post:
        def after_flow_step(self, ctx: Any) -> Any:
            result = ctx.payload["step_result"]
            if result["name"] == "a":
                return {"action": "replace", "payload": {"content": "A-redacted"}}
            return {"allowed": False, "reason": "output rejected"}

    result = _two_steps(recorder, [Post()]).run("q")
    assert result.steps["a"].content == "A-redacted"
    assert "A-redacted" in dict(recorder.calls)["b"]
    assert result.steps["b"].status == "failed" and "output rejected" in result.steps["b"].error


def test_after_flow_step_retry_runs_the_step_again(recorder: Any, flow_executor: Any) -> None:
    calls = {"n": 0}

    async def check(ctx: Any) -> Any:
        if ctx.phase == "after_flow_step" and ctx.step_name == "a":
            calls["n"] += 1
            return {"action": "retry"} if calls["n"] == 1 else None
        return None

    flow = LightFlow(executor=flow_executor, hooks=[check]).step(
        "a", agent=recorder.agent("a"), max_retry=2
    )
    assert flow.run("q").success
    assert recorder.count("a") == 2


def test_fallback_decision_routes_to_the_fallback_agent(recorder: Any) -> None:
    def route(ctx: Any) -> Any:
        return {"action": "fallback"} if ctx.phase == "before_flow_step" else None

    flow = LightFlow(hooks=[route]).step(
        "a", agent=recorder.agent("main"), fallback_agent=recorder.agent("spare", "S")
    )
    result = flow.run("q")
    assert result.content == "S" and result.steps["a"].used_fallback and recorder.count("main") == 0
    without = LightFlow(hooks=[route]).step("a", agent=recorder.agent("main"))
    assert without.run("q").steps["a"].error_code == "LA-HOOK"


def test_a_plain_hook_that_raises_is_isolated(recorder: Any) -> None:
    def broken(ctx: Any) -> Any:
        raise RuntimeError("observer bug")

    result = _two_steps(recorder, [broken]).run("q", trace=True)
    assert result.success
    errors = [
        e["data"] for e in result.trace if e["type"] == "hook_decision" and e["data"].get("error")
    ]
    assert (
        errors
        and errors[0]["error_type"] == "RuntimeError"
        and errors[0]["failure_mode"] == "continue"
    )


def test_a_fail_closed_hook_that_raises_blocks(recorder: Any) -> None:
    class Strict:
        failure_mode = "block"

        def before_flow_step(self, ctx: Any) -> Any:
            raise RuntimeError("policy service down")

    result = _two_steps(recorder, [Strict()]).run("q")
    assert result.steps["a"].status == "failed" and result.steps["a"].error_code == "LA-HOOK"
    assert recorder.calls == []


def test_core_policy_hook_and_hook_decision_are_honoured(recorder: Any) -> None:
    hooks_mod = pytest.importorskip("lightagent.hooks")
    review = pytest.importorskip("lightagent_review")  # PolicyHook lives in lightagent-review

    def deny_b(ctx: Any) -> Any:
        if ctx.step_name == "b":
            return hooks_mod.HookDecision.block("policy says no")
        return hooks_mod.HookDecision.replace({"query": "rewritten"})

    def crashes(ctx: Any) -> Any:
        raise RuntimeError("boom")

    policy = review.PolicyHook(deny_b, phases={"before_flow_step"})
    result = _two_steps(recorder, [policy]).run("q")
    assert dict(recorder.calls)["a"] == "rewritten"
    assert result.steps["b"].status == "failed" and "policy says no" in result.steps["b"].error

    closed = review.PolicyHook(crashes, phases={"before_flow_step"})
    result = _two_steps(recorder, [closed]).run("q")
    assert result.steps["a"].status == "failed" and result.steps["a"].error_code == "LA-HOOK"


def test_unknown_or_unreadable_decisions_block_never_pass() -> None:
    assert normalize({"action": "teleport"}).action == "block"
    assert normalize(object()).action == "block"
    assert normalize(None).action == "continue" and normalize(True).action == "continue"
    assert normalize(False) == FlowHookDecision("block", reason="hook returned False")
    assert normalize("nope").reason == "nope"
    assert normalize({"payload": {"x": 1}}).action == "replace"


def test_on_approval_required_is_called_and_can_refuse(recorder: Any) -> None:
    asked: list[str] = []

    def notify(ctx: Any) -> Any:
        if ctx.phase == "on_approval_required":
            asked.append(ctx.payload["request_id"])
        return None

    flow = LightFlow(hooks=[notify]).step("a", agent=recorder.agent("a"), requires_approval=True)
    result = flow.run("q")
    assert result.status == "waiting_approval" and asked == [result.steps["a"].approval_request_id]

    def refuse(ctx: Any) -> Any:
        return "no reviewers on weekends" if ctx.phase == "on_approval_required" else None

    flow = LightFlow(hooks=[refuse]).step("a", agent=recorder.agent("a"), requires_approval=True)
    result = flow.run("q")
    assert result.steps["a"].status == "failed" and result.steps["a"].error_code == "LA-APPROVAL"


def test_hooks_can_emit_into_the_flow_trace(recorder: Any) -> None:
    def audit(ctx: Any) -> None:
        if ctx.phase == "after_flow_step":
            ctx.emit("audit", {"step": ctx.step_name})

    result = _two_steps(recorder, [audit]).run("q", trace=True)
    assert [e["data"]["step"] for e in result.trace if e["type"] == "audit"] == ["a", "b"]


def test_observers_get_every_event_and_a_broken_one_is_isolated(recorder: Any) -> None:
    got: list[str] = []

    class Broken:
        def on_event(self, event: dict[str, Any]) -> None:
            raise ValueError("bad observer")

    flow = _two_steps(recorder, [], observers=[lambda e: got.append(e["type"]), Broken()])
    result = flow.run("q", trace=True)
    assert result.success and got[0] == "flow_start" and got[-1] == "flow_end"
    assert any(e["type"] == "observer_failed" for e in result.trace)


def test_bare_replace_values_are_applied_not_dropped(recorder: Any) -> None:
    hooks_mod = pytest.importorskip("lightagent.hooks")

    def rewrite(ctx: Any) -> Any:
        if ctx.phase == "before_flow_step":
            return hooks_mod.HookDecision.replace("a brand new query")
        return {"allowed": True, "value": "cleaned output"}

    flow = LightFlow(hooks=[rewrite]).step("a", agent=recorder.agent("a"))
    result = flow.run("q")
    assert recorder.calls == [("a", "a brand new query")]
    assert result.content == "cleaned output"


def test_flow_phases_are_registered_with_the_kernel() -> None:
    from lightagent.hooks import ALL_PHASES, check_phases, known_phases
    from lightagent_control import HookManager
    from lightagent_flow.hooks import FLOW_HOOK_PHASES, FLOW_PHASES

    assert FLOW_PHASES == (
        "before_flow_step",
        "after_flow_step",
        "on_approval_required",
        "on_resume",
        "on_rerun",
    )
    assert FLOW_HOOK_PHASES is FLOW_PHASES
    assert set(FLOW_PHASES) <= known_phases() and not set(FLOW_PHASES) & ALL_PHASES

    class OnlyAFlowPhase:
        def on_rerun(self, ctx: Any) -> None:
            return None

    assert HookManager([OnlyAFlowPhase()]).hooks  # a flow phase method is a phase method
    # what a PolicyHook's (lightagent-review) phases= is checked by
    assert check_phases(set(FLOW_PHASES), "PolicyHook") == set(FLOW_PHASES)
