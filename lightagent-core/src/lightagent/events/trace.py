"""Trace as a projection: summaries, exporters, and exporter isolation.

A trace is the list of events a run emitted (``RunResult.trace``, ``export_trace()``)
or the trace view of a session (``ContextProjector.trace``). :func:`summarize_trace`
folds it into a :class:`TraceSummary`; exporters receive ``(events, summary,
metadata)``. Exporters are observers: one that fails is recorded (an
``exporter_error`` event, :attr:`ExportReport.failures`) and never fails the run.
Everything handed to an exporter is redacted first.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ConfigurationError
from lightagent.redaction import redact_or_marker

__all__ = [
    "ExportReport",
    "ExportingObserver",
    "JsonlTraceExporter",
    "TraceExporter",
    "TraceSummary",
    "export_trace",
    "normalize_usage",
    "resolve_exporter",
    "summarize_trace",
]

log = logging.getLogger("lightagent.events")


@dataclass
class TraceSummary:
    """Counts, latencies, retries, errors, usage and cost of one trace (the seeds' fields)."""

    event_count: int = 0
    duration_ms: float = 0.0
    model_request_count: int = 0
    model_latency_ms: float = 0.0
    tool_call_count: int = 0
    tool_success_count: int = 0
    tool_success_rate: float | None = None
    tool_latency_ms: float = 0.0
    retry_count: int = 0
    error_count: int = 0
    error_categories: dict[str, int] = field(default_factory=dict)
    review_counts: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] | None = None
    estimated_cost_usd: float | None = None
    trace_ids: list[str] = field(default_factory=list)
    parent_trace_id: str | None = None
    run_group_id: str | None = None
    #: Trace ids of the subagent runs this trace started (its ``subagent_*`` events).
    child_trace_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return asdict(self)


@runtime_checkable
class TraceExporter(Protocol):
    """Where traces go. Register one with the ``register_exporters`` hook."""

    def export(
        self, events: list[dict[str, Any]], summary: TraceSummary, metadata: dict[str, Any]
    ) -> None:
        """Ship one trace."""
        ...


def normalize_usage(value: Any) -> dict[str, int] | None:
    """``{prompt_tokens, completion_tokens, total_tokens}`` from a usage object or dict."""
    if value is None:
        return None
    get = value.get if isinstance(value, Mapping) else lambda k, d=None: getattr(value, k, d)
    prompt = int(get("prompt_tokens") or get("input_tokens") or 0)
    completion = int(get("completion_tokens") or get("output_tokens") or 0)
    total = int(get("total_tokens") or (prompt + completion))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def _as_trace(events: Iterable[Any]) -> list[dict[str, Any]]:
    items = list(events)
    if items and not isinstance(items[0], Mapping):
        from lightagent.events.projector import ContextProjector

        return ContextProjector().trace(items)
    return [dict(e) for e in items]


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def summarize_trace(
    events: Iterable[Any],
    *,
    usage: Any = None,
    pricing: Mapping[str, float] | None = None,
) -> TraceSummary:
    """Fold a trace (trace dicts or session events) into a :class:`TraceSummary`.

    ``pricing`` is ``{"input_per_million": $, "output_per_million": $}``; ``usage``
    overrides the usage found in the events.
    """
    trace = _as_trace(events)
    s = TraceSummary(event_count=len(trace))
    usage_in: dict[str, Any] = {}  # per event type: a run's total is used only without the rest
    end_durations = 0.0
    saw_end = False
    tool_results = 0
    stamps = [e["timestamp"] for e in trace if isinstance(e.get("timestamp"), (int, float))]
    for event in trace:
        kind = str(event.get("type") or "")
        data: Mapping[str, Any] = event["data"] if isinstance(event.get("data"), Mapping) else {}
        trace_id = event.get("trace_id")
        if trace_id and trace_id not in s.trace_ids:
            s.trace_ids.append(trace_id)
        s.parent_trace_id = s.parent_trace_id or event.get("parent_trace_id")
        s.run_group_id = s.run_group_id or event.get("run_group_id")
        if kind in ("model_request", "model_response", "run_end") and data.get("usage"):
            usage_in[kind] = _add(usage_in.get(kind), normalize_usage(data["usage"]))
        if kind == "model_request":
            s.model_request_count += 1
            s.model_latency_ms += _num(data.get("latency_ms"))
        elif kind == "model_response":
            s.model_latency_ms += _num(data.get("latency_ms"))
            s.retry_count += max(0, int(_num(data.get("attempts")) or 1) - 1)
        elif kind == "tool_call":
            s.tool_call_count += 1
        elif kind == "tool_result":
            tool_results += 1
            s.tool_latency_ms += _num(data.get("latency_ms"))
            if not data.get("error"):
                s.tool_success_count += 1
        elif kind == "error":
            s.error_count += 1
            category = _category(data)
            s.error_categories[category] = s.error_categories.get(category, 0) + 1
        elif kind == "run_end":
            saw_end = True
            end_durations += _num(data.get("duration_ms"))
            s.retry_count += int(_num(data.get("retry_count")))
        elif kind in ("subagent_completed", "subagent_failed", "subagent_cancelled"):
            child = data.get("trace_id")
            if isinstance(child, str) and child not in s.child_trace_ids:
                s.child_trace_ids.append(child)
        elif kind.startswith("approval_") or kind == "human_feedback":
            s.review_counts[kind] = s.review_counts.get(kind, 0) + 1
    if saw_end:
        s.duration_ms = round(end_durations, 3)
    elif len(stamps) > 1:
        s.duration_ms = round((max(stamps) - min(stamps)) * 1000, 3)
    s.model_latency_ms = round(s.model_latency_ms, 3)
    s.tool_latency_ms = round(s.tool_latency_ms, 3)
    if tool_results:
        s.tool_success_rate = round(s.tool_success_count / tool_results, 4)
    order = ("model_response", "model_request", "run_end")
    found_usage = next((usage_in[k] for k in order if usage_in.get(k)), None)
    s.usage = normalize_usage(usage) if usage is not None else found_usage
    if pricing and s.usage:
        s.estimated_cost_usd = round(
            s.usage["prompt_tokens"] * float(pricing.get("input_per_million", 0)) / 1e6
            + s.usage["completion_tokens"] * float(pricing.get("output_per_million", 0)) / 1e6,
            8,
        )
    return s


def _add(a: dict[str, int] | None, b: dict[str, int] | None) -> dict[str, int] | None:
    if b is None:
        return a
    if a is None:
        return dict(b)
    return {k: a[k] + b[k] for k in a}


def _category(data: Mapping[str, Any]) -> str:
    error = data.get("error")
    if isinstance(error, Mapping) and error.get("code"):
        return str(error["code"])
    if isinstance(error, str) and error.startswith("[LA-"):
        return error[1 : error.find("]")] if "]" in error else "LA-UNKNOWN"
    return str(data.get("stage") or "unknown")


class JsonlTraceExporter:
    """Appends one JSON line per exported trace: ``{exported_at, metadata, summary, events}``."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._lock = threading.Lock()

    def export(
        self, events: list[dict[str, Any]], summary: TraceSummary, metadata: dict[str, Any]
    ) -> None:
        """Append the trace as one redacted line."""
        record = redact_or_marker(
            {
                "exported_at": time.time(),
                "metadata": metadata,
                "summary": summary.to_dict() if isinstance(summary, TraceSummary) else summary,
                "events": events,
            }
        )
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            if self.fsync:
                os.fsync(handle.fileno())


@dataclass
class ExportReport:
    """What :func:`export_trace` did: the summary, who got it, and who failed."""

    summary: TraceSummary
    exported: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)


def resolve_exporter(spec: Any, **options: Any) -> Any:
    """An exporter instance: an object with ``export``, or a name registered through
    ``register_exporters`` (a class or factory is called with ``options``)."""
    if hasattr(spec, "export") and not isinstance(spec, type):
        return spec
    if isinstance(spec, str):
        from lightagent.plugins import get_registry

        spec = get_registry().get("exporter", spec).load()
    if callable(spec):
        made = spec(**options)
        if hasattr(made, "export"):
            return made
    raise ConfigurationError(
        "LA-CONFIG",
        f"{spec!r} is not a trace exporter (an object with export(events, summary, metadata)).",
        hint="Pass an exporter instance or a name from `lightagent plugins` (kind: exporter).",
    )


def export_trace(
    events: Iterable[Any],
    exporters: Any,
    *,
    usage: Any = None,
    pricing: Mapping[str, float] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> ExportReport:
    """Summarize and hand a trace to one or more exporters, each isolated.

    A failing exporter is logged and listed in :attr:`ExportReport.failures`; the
    others still run and nothing is raised.
    """
    trace = _as_trace(events)
    summary = summarize_trace(trace, usage=usage, pricing=pricing)
    report = ExportReport(summary)
    items = exporters if isinstance(exporters, (list, tuple)) else [exporters]
    clean_events = redact_or_marker(trace)
    if not isinstance(clean_events, list):
        clean_events = []
    clean_meta = redact_or_marker(dict(metadata or {}))
    if not isinstance(clean_meta, dict):
        clean_meta = {}
    for exporter in items:
        name = type(exporter).__name__
        try:
            exporter.export(clean_events, summary, clean_meta)
            report.exported.append(name)
        except Exception as exc:  # an exporter is an observer: record, never raise
            failure = {"exporter": name, "error": f"{type(exc).__name__}: {exc}"[:500]}
            report.failures.append(failure)
            log.warning("trace exporter %s failed: %s", name, failure["error"])
    return report


class ExportingObserver:
    """A ``RunObserver`` that exports each run's trace to ``exporters`` when the run ends.

    It collects the run's events itself (so ``trace=True`` is not needed), exports at
    ``run_end``, and records each exporter failure as an ``exporter_error`` event of
    the run. Build one per run, or share one: state is kept per run id.
    """

    def __init__(
        self,
        exporters: Sequence[Any],
        *,
        pricing: Mapping[str, float] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.exporters = [resolve_exporter(e) for e in exporters]
        self.pricing = pricing
        self.metadata = dict(metadata or {})
        self._runs: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.reports: list[ExportReport] = []

    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        """Collect; export at ``run_end`` (sync driver)."""
        events = self._collect(run, event)
        if events is not None:
            self._report(
                run,
                export_trace(
                    events, self.exporters, pricing=self.pricing, metadata=self._meta(run)
                ),
            )

    async def aon_event(self, run: Any, event: dict[str, Any]) -> None:
        """Collect; export at ``run_end`` in a worker thread (async driver)."""
        import asyncio

        events = self._collect(run, event)
        if events is not None:
            report = await asyncio.to_thread(
                export_trace, events, self.exporters, pricing=self.pricing, metadata=self._meta(run)
            )
            self._report(run, report)

    def _collect(self, run: Any, event: dict[str, Any]) -> list[dict[str, Any]] | None:
        if event.get("type") == "exporter_error":
            return None
        run_id = str(event.get("run_id") or getattr(run, "run_id", ""))
        with self._lock:
            self._runs.setdefault(run_id, []).append(event)
            if event.get("type") != "run_end":
                return None
            return self._runs.pop(run_id)

    def _meta(self, run: Any) -> dict[str, Any]:
        return {
            **self.metadata,
            "run_id": getattr(run, "run_id", None),
            "agent_name": getattr(run, "agent_name", None),
        }

    def _report(self, run: Any, report: ExportReport) -> None:
        self.reports.append(report)
        emit = getattr(run, "emit", None)
        for failure in report.failures:
            if emit is not None:
                emit("exporter_error", failure)
