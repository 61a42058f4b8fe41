"""``TraceRecorder``: the seeds' hand-held trace recorder, as a thin view over trace events.

In LightAgent 0.11 every run kept its own ``TraceRecorder``; here a run's trace is
``RunResult.trace`` (and the session log it is projected from), so the recorder is for
code outside a run — a script, a test, a flow of one's own — that wants to write events
in the same shape and hand them to :func:`~lightagent.summarize_trace` and the trace
exporters. :meth:`TraceRecorder.of` wraps an existing trace (a result's, a session's
events) so the seeds' ``summarize``/``export`` calls work on it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["TraceRecorder"]


class TraceRecorder:
    """Collect trace events (``{type, data, trace_id, parent_trace_id, run_group_id,
    timestamp}``) when ``enabled``; a disabled recorder records nothing, as in the seeds."""

    def __init__(
        self,
        enabled: bool = False,
        trace_id: str | None = None,
        parent_trace_id: str | None = None,
        run_group_id: str | None = None,
    ) -> None:
        self.enabled = bool(enabled)
        self.trace_id = trace_id
        self.parent_trace_id = parent_trace_id
        self.run_group_id = run_group_id
        self.events: list[dict[str, Any]] = []

    @classmethod
    def of(cls, events: Any) -> TraceRecorder:
        """An enabled recorder holding ``events``: a trace list, a ``RunResult`` (its
        ``trace``) or session events (projected to trace events)."""
        trace = getattr(events, "trace", events)
        items = list(trace) if isinstance(trace, Iterable) else []
        if items and not isinstance(items[0], Mapping):  # session events: their trace view
            from lightagent.events.projector import ContextProjector

            items = ContextProjector().trace(items)
        first = items[0] if items else {}
        recorder = cls(True, first.get("trace_id"), first.get("parent_trace_id"))
        recorder.run_group_id = first.get("run_group_id")
        recorder.events = [dict(e) for e in items]
        return recorder

    def record(self, type: str, data: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """Append one event and return it; ``None`` when the recorder is disabled."""
        if not self.enabled:
            return None
        event = {
            "type": str(type),
            "data": dict(data or {}),
            "trace_id": self.trace_id,
            "parent_trace_id": self.parent_trace_id,
            "run_group_id": self.run_group_id,
            "timestamp": time.time(),
        }
        self.events.append(event)
        return event

    def record_feedback(self, feedback: Any) -> dict[str, Any] | None:
        """Record a person's annotation (a dict or an object with ``to_dict``) as
        ``human_feedback``."""
        to_dict = getattr(feedback, "to_dict", None)
        if callable(to_dict):
            feedback = to_dict()
        if not isinstance(feedback, Mapping):
            from lightagent.errors import ValidationError

            raise ValidationError(
                "LA-VALIDATION",
                f"feedback must be a dict or have to_dict(), got {type(feedback).__name__}",
            )
        return self.record("human_feedback", feedback)

    def to_list(self) -> list[dict[str, Any]]:
        """A copy of the recorded events."""
        return [dict(e) for e in self.events]

    def summarize(self, *, usage: Any = None, pricing: Mapping[str, float] | None = None) -> Any:
        """:func:`~lightagent.summarize_trace` of the recorded events."""
        from lightagent.events.trace import summarize_trace

        return summarize_trace(self.events, usage=usage, pricing=pricing)

    def export(
        self,
        exporter: Any,
        *,
        usage: Any = None,
        pricing: Mapping[str, float] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Any:
        """Hand the events to ``exporter`` (or a list of them) through
        :func:`~lightagent.export_trace`; returns its ``ExportReport``."""
        from lightagent.events.trace import export_trace

        return export_trace(self.events, exporter, usage=usage, pricing=pricing, metadata=metadata)
