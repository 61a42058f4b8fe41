"""What a run returns: :class:`RunResult`, and :class:`StreamEvent` for typed streaming."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RESULT_FORMATS",
    "STREAM_EVENT_TYPES",
    "STREAM_RESULT_FORMATS",
    "RunResult",
    "StreamEvent",
]

#: ``result_format`` values of a non-streamed run.
RESULT_FORMATS = ("str", "object", "dict")
#: ``result_format`` values of a streamed run.
STREAM_RESULT_FORMATS = ("str", "event")
#: ``StreamEvent.type`` values.
STREAM_EVENT_TYPES = (
    "content",
    "reasoning",
    "tool_call",
    "tool_result",
    "handoff",
    "thought",
    "error",
    "done",
)


@dataclass
class RunResult:
    """The outcome of one run (``result_format="object"``; ``"dict"`` gives :meth:`to_dict`).

    ``error`` is the run's :class:`~lightagent.errors.LightAgentError` as a dict (``code``,
    ``message``, ``hint``, ``details``) or None; ``str(result)`` is ``content``.
    ``parsed`` holds the validated model instance when ``output_schema=`` was given.
    ``handoffs`` lists the handoffs made (a run that hands off names its target; a
    ``LightSwarm`` result lists every handoff of the chain, in order).
    """

    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] | None = None
    trace_id: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    parsed: Any = None
    run_id: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)
    handoffs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """True when the run ended without an error."""
        return self.error is None

    def __str__(self) -> str:
        return self.content or ""

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (``parsed`` as its ``model_dump()`` when it has one)."""
        parsed = self.parsed
        if parsed is not None and hasattr(parsed, "model_dump"):
            parsed = parsed.model_dump()
        return {
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "trace_id": self.trace_id,
            "trace": self.trace,
            "error": self.error,
            "parsed": parsed,
            "run_id": self.run_id,
            "messages": self.messages,
            "handoffs": self.handoffs,
        }


@dataclass
class StreamEvent:
    """One typed item of a stream (``result_format="event"``).

    ``type`` is one of ``content`` / ``reasoning`` (``data`` is the text delta),
    ``tool_call`` (``{name, title, arguments, call_id}``), ``tool_result``
    (``{name, title, output, latency_ms, call_id}``), ``error`` (the error dict) or
    ``done`` (the :class:`RunResult` as a dict, last). ``raw`` keeps the OpenAI chunk
    a content or reasoning event came from.
    """

    type: str
    data: Any = None
    trace_id: str | None = None
    raw: dict[str, Any] | None = field(default=None, repr=False)
