"""LightEvaluator on LightFlow runs, the trace page of a flow session, and the flow progress line."""

from __future__ import annotations

from pathlib import Path

from lightagent import (
    EvaluationCase,
    LightAgent,
    LightEvaluator,
    ScriptedModel,
    SqliteSessionStore,
    tool,
)
from lightagent_devtools.trace_page import build_timeline
from lightagent_flow import JsonLightFlowStore, LightFlow


@tool
def lookup(company: str) -> str:
    """Look a company up."""
    return f"{company} makes anvils"


def _flow(tmp_path: Path, recorder, **kw) -> LightFlow:
    research = LightAgent(
        name="research",
        model=ScriptedModel(
            [
                {"tool_calls": [{"name": "lookup", "arguments": {"company": "ACME"}}]},
                "ACME makes anvils.",
            ]
        ),
    )
    return (
        LightFlow(store=JsonLightFlowStore(tmp_path / "runs"), retry_backoff=0, **kw)
        .step("research", agent=research, tools=[lookup])
        .step("write", agent=recorder.agent("write", "A report on anvils."), depends_on=["research"], max_retry=2)
    )  # fmt: skip


def test_evaluator_scores_a_flow_run_with_step_tools_and_recovery(tmp_path, recorder) -> None:
    recorder.fail["write"] = 1  # the first attempt fails, the retry recovers
    flow = _flow(tmp_path, recorder)
    case = EvaluationCase(
        name="report",
        query="Analyze ACME",
        expected_output_contains=("anvils",),
        expected_tools=("lookup",),
        expected_trace_events=("flow_start", "step_end", "flow_end"),
        require_recovery=True,
        checks=(lambda result, trace: (result.steps["write"].attempts == 2, "no retry"),),
    )
    report = LightEvaluator().run(flow, [case])
    report.assert_all_passed()
    assert report["report"].tools_called == ["lookup"]


def test_evaluator_reports_a_failed_flow(tmp_path, recorder) -> None:
    recorder.fail["write"] = 5
    report = LightEvaluator().run(
        _flow(tmp_path, recorder),
        [EvaluationCase(name="broken", query="Analyze ACME", forbidden_tools=("lookup",))],
    )
    failures = report["broken"].failures
    assert failures[0].startswith("expected success, got error")
    assert "forbidden tool 'lookup' was called" in failures and len(failures) == 2


def test_flow_session_on_the_trace_page(tmp_path, recorder) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    flow = _flow(tmp_path, recorder, session_store=store)
    result = flow.run("Analyze ACME", run_id="flow-page", trace=True)
    assert result.success
    timeline = build_timeline(store.events("flow-page"))
    kinds = {(s["kind"], s["label"]) for s in timeline["spans"]}
    assert ("flow", "flow flow-page") in kinds  # named by its run id
    assert {("step", "step research"), ("step", "step write")} <= kinds
    assert all(s["status"] == "ok" for s in timeline["spans"])
    # The recorded flow run is re-scored from the session, without running anything.
    again = LightEvaluator().rescore(
        store,
        [
            EvaluationCase(name="ok", session_id="flow-page", query="Analyze ACME",
                           expected_trace_events=("step_end",), max_latency_ms=60_000),
            EvaluationCase(name="strict", session_id="flow-page", run_id="flow-page",
                           forbidden_trace_events=("step_start",)),
        ],
    )  # fmt: skip
    assert again["ok"].passed, again["ok"].failures
    assert again["strict"].failures == ["forbidden trace event 'step_start' present"]
    store.close()


def test_flow_progress_line_only_when_asked_or_on_a_tty(tmp_path, recorder, capsys) -> None:
    _flow(tmp_path, recorder, progress=True).run("Analyze ACME", run_id="p1")
    drawn = capsys.readouterr().err
    assert "flow p1" in drawn and "2/2" in drawn and "write: success" in drawn
    # Under pytest stderr is not a terminal: the default stays quiet.
    _flow(tmp_path, recorder).run("Analyze ACME", run_id="p2")
    assert capsys.readouterr().err == ""
