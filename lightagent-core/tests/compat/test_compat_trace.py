"""Item 8 of issue 18: trace is opt-in; summarize_trace reads the seeds' event dicts."""

from __future__ import annotations

from lightagent import LightAgent, ScriptedModel, summarize_trace


def test_trace_is_opt_in_and_follows_the_last_run() -> None:
    agent = LightAgent(model=ScriptedModel(["one", "two", "three"]))
    result = agent.run("q", result_format="object")
    assert result.trace == [] and agent.export_trace() == []
    traced = agent.run("q", result_format="object", trace=True)
    assert traced.trace and agent.export_trace() == traced.trace
    # The next run without trace=True leaves nothing behind (the seeds' recorder is per run).
    agent.run("q")
    assert agent.export_trace() == []


def test_summarize_trace_without_timestamps() -> None:
    events = [
        {"type": "model_request", "data": {}},
        {"type": "model_response", "data": {"usage": {"total_tokens": 3}}},
        {"type": "tool_call", "data": {"tool_name": "x"}},
        {"type": "tool_result", "data": {"tool_name": "x", "success": True}},
    ]
    summary = summarize_trace(events)
    assert summary.event_count == 4 and summary.model_request_count == 1
    assert summary.tool_call_count == 1 and summary.tool_success_rate == 1.0
    assert summary.duration_ms == 0.0
