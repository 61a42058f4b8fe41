"""LightEvaluator against live agents (real openai SDK, loopback server), LightFlow runs and
recorded sessions in a real SQLite file (re-scored without a model)."""

from __future__ import annotations

import asyncio
import json

import pytest
from lightagent import (
    EvaluationCase,
    EvaluationReport,
    HumanApprovalHook,
    InMemoryReviewStore,
    LightAgent,
    LightEvaluator,
    SqliteSessionStore,
    ValidationError,
)
from lightagent_contracts import LoopbackServer

PRICING = {"input_per_million": 1.0, "output_per_million": 2.0}


def lookup(city: str) -> str:
    """Look up the weather of a city."""
    if city == "nowhere":
        raise ValueError("unknown city")
    return f"{city}: sunny"


def send_payment(invoice: int) -> str:
    """Pay an invoice."""
    return f"paid {invoice}"


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="sk-test", base_url=server.base_url, **kw)


def _weather_script(server) -> None:
    server.reply(
        {
            "tool_calls": [
                {"name": "lookup", "arguments": {"city": "nowhere"}},
                {"name": "lookup", "arguments": {"city": "Paris"}},
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
        {
            "content": "Paris is sunny.",
            "usage": {"prompt_tokens": 150, "completion_tokens": 10, "total_tokens": 160},
        },
    )


def test_live_agent_passes_output_tools_recovery_usage_and_cost(loopback_server) -> None:
    _weather_script(loopback_server)
    agent = agent_for(loopback_server, tools=[lookup])
    case = EvaluationCase(
        name="weather",
        query="Weather in Paris?",
        expected_output_contains=("sunny",),
        expected_tools=("lookup",),
        forbidden_tools=("send_payment",),
        expected_trace_events=("tool_result", "run_end"),
        require_recovery=True,
        max_latency_ms=30_000,
        max_total_tokens=1000,
        max_cost_usd=0.01,
        checks=(lambda result, trace: (len(trace) > 3, "short trace"),),
        metadata={"team": "travel"},
    )
    report = LightEvaluator(pricing=PRICING).run(agent, [case])
    report.assert_all_passed()
    result = report["weather"]
    assert result.tools_called == ["lookup", "lookup"]
    assert result.summary.usage["total_tokens"] == 280
    assert result.summary.estimated_cost_usd == pytest.approx(250e-6 + 30 * 2e-6)
    assert result.metadata == {"team": "travel"} and result.duration_ms > 0
    assert report.to_dict()["pass_rate"] == 1.0
    json.dumps(report.to_dict())  # JSON-safe
    loopback_server.assert_exhausted()


def test_every_failed_expectation_is_reported(loopback_server) -> None:
    _weather_script(loopback_server)
    agent = agent_for(loopback_server, tools=[lookup, send_payment])
    case = EvaluationCase(
        name="strict",
        query="Weather?",
        expected_output_contains=("rainy", "Paris"),
        expected_tools=("send_payment",),
        forbidden_tools=("lookup",),
        expected_trace_events=("approval_required",),
        forbidden_trace_events=("error",),
        max_latency_ms=0.001,
        max_total_tokens=10,
        max_cost_usd=0.0000001,
        checks=(lambda r, t: "custom says no", lambda r, t: 1 / 0),
    )
    report = LightEvaluator(pricing=PRICING).run(agent, [case])
    failures = report["strict"].failures
    assert report.failed == 1 and report.pass_rate == 0.0
    expected = [
        "output does not contain 'rainy'",
        "tool 'send_payment' was not called",
        "forbidden tool 'lookup' was called",
        "trace event 'approval_required' missing",
        "forbidden trace event 'error' present",
        "latency",
        "used 280 tokens, more than 10",
        "estimated cost",
        "custom says no",
        "raised ZeroDivisionError",
    ]
    for needle in expected:
        assert any(needle in f for f in failures), (needle, failures)
    assert len(failures) == len(expected)
    with pytest.raises(AssertionError) as raised:
        report.assert_all_passed()
    assert "FAIL strict" in str(raised.value) and "custom says no" in str(raised.value)
    with pytest.raises(AssertionError, match="forbidden tool 'lookup'"):
        report["strict"].assert_passed()


def test_policy_events_from_an_approval_hook(loopback_server) -> None:
    """The seeds' example: a payment needs approval, no forbidden tool runs."""
    loopback_server.reply(
        {"tool_calls": [{"name": "send_payment", "arguments": {"invoice": 42}}]},
        "I need approval first.",
    )
    agent = agent_for(loopback_server, tools=[send_payment])
    agent.hooks.hooks.append(HumanApprovalHook(store=InMemoryReviewStore(), tools={"send_payment"}))
    report = LightEvaluator().run(
        agent,
        [
            EvaluationCase(
                name="payment policy",
                query="Pay invoice 42",
                expected_trace_events=("approval_required",),
                forbidden_tools=("delete_account",),
            )
        ],
    )
    result = report["payment policy"]
    assert "approval_required" in {e["type"] for e in result.trace}
    assert result.passed, result.failures


def test_no_recovery_and_expected_failure_are_scored(loopback_server) -> None:
    loopback_server.reply("plain answer")
    loopback_server.reply(LoopbackServer.error(500))
    agent = agent_for(loopback_server)
    report = LightEvaluator().run(
        agent,
        [
            EvaluationCase(name="needs recovery", query="q1", require_recovery=True),
            EvaluationCase(
                name="must fail", query="q2", expect_success=False, run_kwargs={"max_retry": 0}
            ),
            EvaluationCase(name="crash", query="q3", run_kwargs={"max_retry": 0}),
        ],
    )
    assert report["needs recovery"].failures == [
        "recovery required, but nothing failed (no error, retry or fallback)"
    ]
    assert report["must fail"].passed and report["must fail"].error["code"] == "LA-500"
    # The server has no reply left: HTTP 500 again, scored as an expected-success failure.
    assert report["crash"].failures[0].startswith("expected success, got error: [LA-500]")


def test_async_run_with_concurrency_on_one_agent(loopback_server) -> None:
    loopback_server.default = lambda body: f"echo {body['messages'][-1]['content']}"
    agent = agent_for(loopback_server)
    cases = [
        EvaluationCase(name=f"c{i}", query=f"q{i}", expected_output_contains=(f"echo q{i}",))
        for i in range(8)
    ]
    report = asyncio.run(LightEvaluator().arun(agent, cases, concurrency=4))
    assert [r.name for r in report.results] == [f"c{i}" for i in range(8)]
    report.assert_all_passed()


def test_callable_target_and_plain_string_result() -> None:
    report = LightEvaluator().run(
        lambda query: query.upper(),
        [EvaluationCase(name="upper", query="abc", expected_output_contains="ABC")],
    )
    assert report.passed == 1 and report["upper"].content == "ABC"


def test_rescore_a_recorded_session_without_a_model(loopback_server, tmp_path) -> None:
    db = tmp_path / "sessions.db"
    _weather_script(loopback_server)
    agent = agent_for(loopback_server, tools=[lookup], session_store=SqliteSessionStore(db))
    live = agent.run("Weather in Paris?", session_id="s-eval", result_format="object")
    loopback_server.stop()  # nothing can call a model from here on
    store = SqliteSessionStore(db)
    case = EvaluationCase(
        name="recorded",
        session_id="s-eval",
        query="Weather in Paris?",
        expected_output_contains=("sunny",),
        expected_tools=("lookup",),
        require_recovery=True,
        max_total_tokens=300,
        max_cost_usd=0.01,
    )
    report = LightEvaluator(pricing=PRICING).rescore(store, [case])
    report.assert_all_passed()
    result = report["recorded"]
    assert result.recorded and result.content == live.content
    assert result.summary.usage["total_tokens"] == 280
    by_run = LightEvaluator().rescore(
        f"sqlite:///{db}",
        [EvaluationCase(name="by run", session_id="s-eval", run_id=live.run_id)],
    )
    assert by_run.passed == 1
    store.close()


def test_rescore_errors_are_typed(tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "empty.db")
    with pytest.raises(ValidationError) as no_session:
        LightEvaluator().rescore(store, [EvaluationCase(name="x")])
    assert no_session.value.code == "LA-VALIDATION" and no_session.value.hint
    with pytest.raises(ValidationError, match="no recorded run") as missing:
        LightEvaluator().rescore(store, [EvaluationCase(name="x", session_id="nope")])
    assert missing.value.hint
    store.close()


def test_bad_cases_are_typed_errors() -> None:
    with pytest.raises(ValidationError) as empty:
        EvaluationCase(name="")
    assert empty.value.hint
    with pytest.raises(ValidationError, match="duplicate case names: a"):
        LightEvaluator().run(str, [EvaluationCase(name="a"), EvaluationCase(name="a")])
    with pytest.raises(ValidationError, match="EvaluationCase objects"):
        LightEvaluator().run(str, [{"name": "a"}])  # type: ignore[list-item]


def test_report_totals_of_no_cases() -> None:
    report = EvaluationReport()
    assert (report.total, report.passed, report.failed, report.pass_rate) == (0, 0, 0, 1.0)
    report.assert_all_passed()


@pytest.mark.parametrize("city", ["Paris", "Rome"])
def test_pytest_parametrized_cases(loopback_server, city) -> None:
    """The pytest shape: one test per case, failures in the assertion message."""
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": {"city": city}}]}, f"{city} is sunny."
    )
    agent = agent_for(loopback_server, tools=[lookup])
    case = EvaluationCase(name=city, query=f"Weather in {city}?", expected_tools=("lookup",))
    LightEvaluator().run_case(agent, case).assert_passed()


def test_an_async_target_needs_arun_and_a_raising_target_is_scored() -> None:
    async def answer(query: str) -> str:
        return "async " + query

    with pytest.raises(ValidationError, match="returned a coroutine") as raised:
        LightEvaluator().run(answer, [EvaluationCase(name="a", query="q")])
    assert "arun" in raised.value.hint
    report = asyncio.run(
        LightEvaluator().arun(
            answer, [EvaluationCase(name="a", query="q", expected_output_contains="async q")]
        )
    )
    assert report.passed == 1

    def boom(query: str) -> str:
        raise ValidationError("LA-VALIDATION", "bad query")

    crashed = LightEvaluator().run(boom, [EvaluationCase(name="b", query="q")])
    assert crashed["b"].failures == ["expected success, got error: [LA-VALIDATION] bad query"]
