"""Trace summaries, the JSONL exporter, exporter isolation and plugin-registered exporters."""

from __future__ import annotations

import asyncio
import json

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ConfigurationError
from lightagent.events.manager import SessionManager
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.trace import (
    ExportingObserver,
    JsonlTraceExporter,
    export_trace,
    normalize_usage,
    resolve_exporter,
    summarize_trace,
)
from lightagent.models.base import ModelResponse, ToolCall, Usage

SECRET = "sk-traceCANARY0123456789abcdef"


@tool
def lookup(city: str) -> str:
    """Look up a city."""
    if city == "nowhere":
        raise ValueError("unknown city")
    return f"{city}: sunny"


def _agent(**kw):
    model = ScriptedModel(
        [
            ModelResponse(
                tool_calls=[
                    ToolCall("c1", "lookup", '{"city": "Paris"}'),
                    ToolCall("c2", "lookup", '{"city": "nowhere"}'),
                ],
                finish_reason="tool_calls",
                usage=Usage(100, 20, 120),
            ),
            ModelResponse(content="done", usage=Usage(150, 10, 160)),
        ]
    )
    return LightAgent(model=model, tools=[lookup], **kw)


def test_summary_counts_latencies_errors_usage_and_cost():
    result = _agent().run(
        "weather?", trace=True, result_format="object", parent_trace_id="p1", run_group_id="g1"
    )
    summary = summarize_trace(
        result.trace, pricing={"input_per_million": 1.0, "output_per_million": 2.0}
    )
    assert summary.model_request_count == 2 and summary.tool_call_count == 2
    assert summary.tool_success_count == 1 and summary.tool_success_rate == 0.5
    assert summary.error_count == 1 and summary.error_categories == {"LA-TOOL": 1}
    assert summary.usage == {"prompt_tokens": 250, "completion_tokens": 30, "total_tokens": 280}
    assert summary.estimated_cost_usd == pytest.approx(250 * 1e-6 + 30 * 2e-6)
    assert summary.duration_ms > 0 and summary.event_count == len(result.trace)
    assert summary.parent_trace_id == "p1" and summary.run_group_id == "g1"
    assert summary.trace_ids == [result.trace_id]
    # Explicit usage wins; usage objects and input/output spellings are read.
    assert summarize_trace(result.trace, usage={"input_tokens": 1, "output_tokens": 2}).usage == {
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "total_tokens": 3,
    }
    assert normalize_usage(Usage(1, 2, 3)) == {
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "total_tokens": 3,
    }
    assert summarize_trace([]).event_count == 0


def test_summary_of_a_session_equals_summary_of_the_run():
    store = InMemorySessionStore()
    result = _agent(session_store=store).run(
        "weather?", session_id="t", trace=True, result_format="object"
    )
    from_session = summarize_trace(SessionManager(store).events("t"))
    from_run = summarize_trace(result.trace)
    assert from_session.to_dict() == from_run.to_dict()


def test_jsonl_exporter_appends_redacted_lines(tmp_path):
    path = tmp_path / "traces" / "t.jsonl"
    exporter = JsonlTraceExporter(path)
    events = [{"type": "run_start", "data": {"query": f"use {SECRET}", "api_key": "plain"}}]
    for _ in range(2):
        report = export_trace(
            events, exporter, metadata={"authorization": "Bearer abcdefghijkl", "env": "test"}
        )
        assert report.exported == ["JsonlTraceExporter"] and report.failures == []
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    text = "\n".join(lines)
    assert SECRET not in text and "plain" not in text and "abcdefghijkl" not in text
    record = json.loads(lines[0])
    assert (
        set(record) == {"exported_at", "metadata", "summary", "events"}
        and record["metadata"]["env"] == "test"
    )


class Broken:
    def export(self, events, summary, metadata):
        raise RuntimeError("collector down")


class Keeper:
    def __init__(self):
        self.got = []

    def export(self, events, summary, metadata):
        self.got.append((events, summary, metadata))


def test_a_failing_exporter_never_fails_the_run_and_is_recorded():
    keeper = Keeper()
    observer = ExportingObserver(
        [Broken(), keeper], pricing={"input_per_million": 1, "output_per_million": 1}
    )
    result = _agent(observers=[observer]).run("weather?", trace=True, result_format="object")
    assert result.content == "done" and result.error is None
    (report,) = observer.reports
    assert report.failures == [{"exporter": "Broken", "error": "RuntimeError: collector down"}]
    _events, summary, metadata = keeper.got[0]
    assert summary.tool_call_count == 2 and metadata["run_id"] == result.run_id
    assert result.trace[-1]["type"] == "exporter_error"


def test_exporting_observer_on_the_async_driver():
    keeper = Keeper()
    observer = ExportingObserver([keeper])
    result = asyncio.run(_agent(observers=[observer]).arun("weather?", result_format="object"))
    assert result.content == "done" and len(keeper.got) == 1


def test_exporters_registered_by_plugins_resolve_by_name(tmp_path):
    exporter = resolve_exporter("jsonl", path=tmp_path / "x.jsonl")
    assert isinstance(exporter, JsonlTraceExporter)
    keeper = Keeper()
    assert resolve_exporter(keeper) is keeper
    with pytest.raises(ConfigurationError):
        resolve_exporter(42)
