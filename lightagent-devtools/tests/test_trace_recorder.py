"""Issue 28, item 11: the seeds' ``TraceRecorder``, a view over trace events."""

from __future__ import annotations

import json

from lightagent import LightAgent, ScriptedModel
from lightagent_devtools import TraceRecorder


def test_a_disabled_recorder_records_nothing() -> None:
    recorder = TraceRecorder()
    assert recorder.record("step", {"n": 1}) is None and recorder.to_list() == []


def test_record_summarize_and_export(tmp_path) -> None:
    from lightagent import JsonlTraceExporter

    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    recorder = TraceRecorder(enabled=True, trace_id="t1", run_group_id="g")
    recorder.record("model_request", {"latency_ms": 4, "usage": usage})
    recorder.record("tool_call", {"name": "lookup"})
    recorder.record("tool_result", {"name": "lookup", "latency_ms": 2})
    recorder.record_feedback({"rating": 5, "comment": "good"})
    events = recorder.to_list()
    assert [e["type"] for e in events][-1] == "human_feedback"
    assert {e["trace_id"] for e in events} == {"t1"} and events[0]["run_group_id"] == "g"
    summary = recorder.summarize(pricing={"input_per_million": 1e6, "output_per_million": 1e6})
    assert summary.model_request_count == 1 and summary.tool_call_count == 1
    assert summary.usage == usage and summary.estimated_cost_usd == 5
    assert summary.review_counts == {"human_feedback": 1}
    path = tmp_path / "trace.jsonl"
    recorder.export(JsonlTraceExporter(path))
    (line,) = path.read_text().splitlines()
    assert len(json.loads(line)["events"]) == 4


def test_of_wraps_a_runs_trace() -> None:
    agent = LightAgent(model=ScriptedModel(["hi"]))
    result = agent.run("hello", trace=True, result_format="object")
    recorder = TraceRecorder.of(result)
    assert recorder.trace_id == result.trace_id and recorder.to_list() == result.trace
    assert recorder.summarize().model_request_count == 1
