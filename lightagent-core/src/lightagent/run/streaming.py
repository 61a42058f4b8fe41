"""Turning what a streamed run produces into ``StreamEvent``s (``result_format="event"``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lightagent.results import RunResult, StreamEvent

__all__ = ["chunk_events", "consumer_chunk", "done_event", "output_event"]


def chunk_events(chunk: Any, trace_id: str | None) -> Iterator[StreamEvent]:
    """``content`` and ``reasoning`` events for one OpenAI chunk dict (none for other chunks)."""
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not choices:
        return
    delta = choices[0].get("delta") or {}
    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
    if reasoning:
        yield StreamEvent("reasoning", reasoning, trace_id, chunk)
    content = delta.get("content")
    if content:
        yield StreamEvent("content", content, trace_id, chunk)


def consumer_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """``chunk`` as the consumer gets it: a usage-only chunk (``choices: []``) gains one
    empty choice, so code that reads ``chunk["choices"][0]["delta"]`` never breaks."""
    if chunk.get("choices"):
        return chunk
    return {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": None}]}


def output_event(effect: Any, trace_id: str | None) -> StreamEvent:
    """The event for a tool dict or error item the loop handed to the consumer."""
    return StreamEvent(effect.kind, effect.item, trace_id)


def done_event(result: RunResult) -> StreamEvent:
    """The last event of a stream: the run's result as a dict."""
    return StreamEvent("done", result.to_dict(), result.trace_id)
