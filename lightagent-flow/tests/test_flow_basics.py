"""LightFlow basics: steps, outputs passed on, results, formats, validation and bad input."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lightagent.errors import ERROR_TAXONOMY, LightAgentError, ValidationError
from lightagent_flow import LightFlow, LightFlowResult, LightFlowStepResult


def test_single_step_returns_object_result_with_trace(recorder: Any, flow_executor: Any) -> None:
    flow = LightFlow(executor=flow_executor).step("only", agent=recorder.agent("only", "hello"))
    result = flow.run("Say hi", trace=True, run_id="r1", parent_trace_id="p1", run_group_id="g1")
    assert isinstance(result, LightFlowResult)
    assert result.success and result.status == "success"
    assert result.content == "hello"
    assert result.run_id == "r1" and result.trace_id
    assert [e["type"] for e in result.trace] == ["flow_start", "step_start", "step_end", "flow_end"]
    for event in result.trace:
        assert event["parent_trace_id"] == "p1" and event["run_group_id"] == "g1"
        assert event["trace_id"] == result.trace_id
    step = result.steps["only"]
    assert isinstance(step, LightFlowStepResult)
    assert step.status == "success" and step.attempts == 1 and step.retry_count == 0
    assert step.idempotency_key == "r1:only"
    assert step.duration_ms is not None and step.started_at <= step.ended_at
    assert step.input_summary == "Say hi" and step.output_summary == "hello"
    end = result.trace[2]["data"]
    assert end["status"] == "success" and end["idempotency_key"] == "r1:only"


def test_trace_is_off_by_default(recorder: Any) -> None:
    result = LightFlow().step("a", agent=recorder.agent("a")).run("q")
    assert result.trace is None


def test_default_query_carries_previous_outputs(recorder: Any, flow_executor: Any) -> None:
    flow = (
        LightFlow(executor=flow_executor)
        .step("research", agent=recorder.agent("research", "facts"))
        .step("write", agent=recorder.agent("write", "essay"), depends_on=["research"])
    )
    result = flow.run("Analyze ACME")
    assert result.content == "essay"
    queries = dict(recorder.calls)
    assert queries["research"] == "Analyze ACME"
    assert queries["write"] == "Analyze ACME\n\nPrevious step outputs:\nresearch: facts"


def test_query_as_string_and_callables(recorder: Any, flow_executor: Any) -> None:
    seen: dict[str, Any] = {}

    def one_arg(ctx: dict[str, Any]) -> str:
        seen["ctx"] = ctx
        return "from ctx: " + ctx["outputs"]["a"]

    async def two_args(query: str, ctx: dict[str, Any]) -> str:
        return f"{query} | {ctx['outputs']['b']}"

    flow = (
        LightFlow(executor=flow_executor)
        .step("a", agent=recorder.agent("a", "A!"), query="fixed text")
        .step("b", agent=recorder.agent("b", "B!"), depends_on="a", query=one_arg)
        .step("c", agent=recorder.agent("c"), depends_on="b", query=two_args)
    )
    flow.run("original")
    queries = dict(recorder.calls)
    assert queries == {"a": "fixed text", "b": "from ctx: A!", "c": "original | B!"}
    ctx = seen["ctx"]
    assert ctx["input"] == "original" and ctx["steps"]["a"].status == "success"


def test_agent_kinds_objects_async_and_run_results() -> None:
    class RunOnly:
        def run(self, query: str, **kw: Any) -> str:
            assert kw["result_format"] == "object"
            return "sync-run"

    class AsyncAgent:
        async def arun(self, query: str, *, user_id: str, metadata: dict[str, Any]) -> Any:
            class Res:  # a RunResult-like object
                content = f"{user_id}:{metadata['flow_step']}"
                error = None
                trace = [{"type": "run_start"}]

            return Res()

    async def coro(query: str, idempotency_key: str) -> dict[str, Any]:
        return {"content": {"key": idempotency_key}}

    flow = (
        LightFlow()
        .step("a", agent=RunOnly())
        .step("b", agent=AsyncAgent(), depends_on="a")
        .step("c", agent=coro, depends_on="b")
    )
    result = flow.run("q", run_id="kinds", user_id="alice")
    assert result.steps["a"].content == "sync-run"
    assert result.steps["b"].content == "alice:b"
    assert result.steps["b"].trace == [{"type": "run_start"}]
    assert result.content == {"key": "kinds:c"}


def test_run_result_with_error_fails_the_step() -> None:
    class Res:
        content = "[LA-429] slow down"
        error = "[LA-429] slow down"

    flow = LightFlow().step("a", agent=lambda q: Res())
    result = flow.run("q")
    assert result.status == "failed"
    assert result.steps["a"].error_code == "LA-429"
    assert result.error_code == "LA-429"


def test_result_formats(recorder: Any) -> None:
    flow = LightFlow().step("a", agent=recorder.agent("a", "out"))
    assert flow.run("q", result_format="str") == "out"
    as_dict = flow.run("q", result_format="dict")
    assert as_dict["content"] == "out" and as_dict["success"] is True
    assert as_dict["steps"][0]["name"] == "a"
    with pytest.raises(ValidationError) as info:
        flow.run("q", result_format="yaml")
    assert info.value.code == "LA-CONFIG"


def test_failed_run_as_str_gives_the_error(recorder: Any) -> None:
    recorder.fail["a"] = 5
    text = LightFlow().step("a", agent=recorder.agent("a")).run("q", result_format="str")
    assert "LA-FLOW-AGENT-ERROR" in text and "a boom" in text


def test_arun_inside_a_loop_and_run_from_a_running_loop(recorder: Any) -> None:
    flow = LightFlow().step("a", agent=recorder.agent("a", "x"))

    async def main() -> tuple[Any, Any]:
        awaited = await flow.arun("q")
        nested = flow.run("q")  # sync call from inside a running loop: runs on a private loop
        return awaited, nested

    awaited, nested = asyncio.run(main())
    assert awaited.content == nested.content == "x"


def test_same_run_id_is_an_idempotent_replay(recorder: Any, flow_executor: Any) -> None:
    flow = LightFlow(executor=flow_executor).step("a", agent=recorder.agent("a"))
    first = flow.run("q", run_id="same")
    again = flow.run("q", run_id="same")
    assert recorder.count("a") == 1
    assert again.idempotent_replay and not first.idempotent_replay
    assert again.content == first.content and again.status == "success"
    with pytest.raises(ValidationError) as info:
        flow.run("another query", run_id="same")
    assert info.value.code == "LA-FLOW-RUN-EXISTS"


@pytest.mark.parametrize("bad", ["../escape", "", "a/b", ".hidden", "x" * 200, 42])
def test_unsafe_run_ids_are_refused(recorder: Any, bad: Any) -> None:
    flow = LightFlow().step("a", agent=recorder.agent("a"))
    with pytest.raises(ValidationError) as info:
        flow.run("q", run_id=bad)
    assert info.value.code == "LA-FLOW-RUN-ID"
    assert recorder.calls == []


def test_validate_reports_unknown_dependencies_and_cycles(recorder: Any) -> None:
    unknown = LightFlow().step("a", agent=recorder.agent("a"), depends_on=["missing"])
    report = unknown.validate()
    assert not report["valid"]
    assert report["errors"][0]["code"] == "LA-FLOW-UNKNOWN-DEPENDENCY"
    with pytest.raises(ValidationError) as info:
        unknown.run("q")
    assert info.value.code == "LA-FLOW-UNKNOWN-DEPENDENCY" and "unknown step" in str(info.value)

    cyclic = (
        LightFlow()
        .step("a", agent=recorder.agent("a"), depends_on="c")
        .step("b", agent=recorder.agent("b"), depends_on="a")
        .step("c", agent=recorder.agent("c"), depends_on="b")
    )
    report = cyclic.validate()
    assert [e["code"] for e in report["errors"]] == ["LA-FLOW-CYCLE"]
    assert "cycle detected" in report["errors"][0]["message"]
    assert set(report["errors"][0]["steps"]) == {"a", "b", "c"}
    with pytest.raises(ValidationError) as info:
        cyclic.run("q")
    assert info.value.code == "LA-FLOW-CYCLE" and info.value.hint
    assert recorder.calls == []

    self_loop = LightFlow().step("a", agent=recorder.agent("a"), depends_on="a")
    assert self_loop.validate()["errors"][0]["code"] == "LA-FLOW-CYCLE"


def test_validate_isolated_steps_warn_or_fail_when_strict(recorder: Any) -> None:
    flow = (
        LightFlow()
        .step("a", agent=recorder.agent("a"))
        .step("b", agent=recorder.agent("b"), depends_on="a")
        .step("loner", agent=recorder.agent("loner"))
    )
    lenient = flow.validate()
    assert lenient["valid"] and lenient["warnings"][0]["code"] == "LA-FLOW-ISOLATED-STEP"
    strict = flow.validate(strict=True)
    assert not strict["valid"] and strict["errors"][0]["steps"] == ["loner"]


def test_duplicate_and_empty_flows(recorder: Any) -> None:
    flow = LightFlow().step("a", agent=recorder.agent("a"))
    with pytest.raises(ValidationError) as info:
        flow.step("a", agent=recorder.agent("a"))
    assert info.value.code == "LA-FLOW-DUPLICATE-STEP"
    with pytest.raises(ValidationError) as info:
        LightFlow().run("q")
    assert info.value.code == "LA-FLOW-EMPTY"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"agent": None},
        {"agent": 42},
        {"agent": print, "max_retry": 0},
        {"agent": print, "max_retry": 1.5},
        {"agent": print, "timeout": -1},
        {"agent": print, "timeout": "soon"},
        {"agent": print, "query": 3},
        {"agent": print, "cancel_if": "yes"},
        {"agent": print, "fallback_agent": "nobody"},
        {"agent": print, "depends_on": ["x", "x"]},
        {"agent": print, "metadata": ["not", "a", "dict"]},
    ],
)
def test_bad_step_options_get_a_typed_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        LightFlow().step("s", **kwargs)
    assert info.value.code == "LA-FLOW-STEP"
    assert str(info.value).startswith("[LA-FLOW-STEP]")


def test_bad_flow_options_and_queries(recorder: Any) -> None:
    with pytest.raises(LightAgentError) as info:
        LightFlow(retry_backoff=-1)
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(LightAgentError):
        LightFlow(max_concurrency=0)
    with pytest.raises(ValidationError):
        LightFlow().step("a", agent=recorder.agent("a")).run(["not", "a", "str"])  # type: ignore[arg-type]


def test_every_flow_code_is_in_the_taxonomy() -> None:
    for code in (
        "LA-FLOW-AGENT-ERROR",
        "LA-FLOW-TIMEOUT",
        "LA-FLOW-CYCLE",
        "LA-FLOW-UNKNOWN-DEPENDENCY",
        "LA-FLOW-DUPLICATE-STEP",
        "LA-FLOW-ISOLATED-STEP",
        "LA-FLOW-EMPTY",
        "LA-FLOW-STEP",
        "LA-FLOW-RUN-ID",
        "LA-FLOW-RUN-NOT-FOUND",
        "LA-FLOW-RUN-EXISTS",
        "LA-FLOW-RUN-ACTIVE",
        "LA-FLOW-MISMATCH",
        "LA-FLOW-APPROVAL",
    ):
        assert ERROR_TAXONOMY[code].hint


def test_a_failing_query_callable_fails_only_that_step(recorder: Any, flow_executor: Any) -> None:
    def broken(ctx: dict[str, Any]) -> str:
        raise KeyError("nope")

    flow = (
        LightFlow(executor=flow_executor)
        .step("a", agent=recorder.agent("a"), query=broken)
        .step("b", agent=recorder.agent("b"), depends_on="a")
    )
    result = flow.run("q")
    assert result.steps["a"].status == "failed" and "KeyError" in result.steps["a"].error
    assert result.steps["b"].status == "skipped"
    assert recorder.calls == []


def test_cancel_if_skips_the_step_and_its_dependants(recorder: Any, flow_executor: Any) -> None:
    flow = (
        LightFlow(executor=flow_executor)
        .step("a", agent=recorder.agent("a"))
        .step(
            "b",
            agent=recorder.agent("b"),
            depends_on="a",
            cancel_if=lambda ctx: ctx["outputs"]["a"] == "a-out",
        )
        .step("c", agent=recorder.agent("c"), depends_on="b")
    )
    result = flow.run("q")
    assert [result.steps[n].status for n in "abc"] == ["success", "skipped", "skipped"]
    assert recorder.count("b") == 0 and recorder.count("c") == 0
    assert result.status == "success" and result.content is None


def test_describe_and_steps_property(recorder: Any) -> None:
    flow = LightFlow().step("a", agent=recorder.agent("a"), timeout=3, max_retry=2)
    assert flow.steps[0].name == "a"
    desc = flow.describe()["steps"][0]
    assert desc["timeout"] == 3.0 and desc["max_retry"] == 2 and "agent" not in desc
