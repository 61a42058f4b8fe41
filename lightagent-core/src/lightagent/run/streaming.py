"""Turning what a streamed run produces into ``StreamEvent``s (``result_format="event"``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lightagent.chunks import Chunk
from lightagent.errors import CancelledError
from lightagent.results import RunResult, StreamEvent

__all__ = [
    "ChunkScreen",
    "cancelled_mid_stream",
    "chunk_events",
    "consumer_chunk",
    "done_event",
    "new_screen",
    "output_event",
]


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


def cancelled_mid_stream(reason: str | None, shown: list[Any]) -> CancelledError:
    """The error of a run aborted between chunks; ``shown`` are the chunks the consumer got.

    Their text is kept as ``details["partial_content"]`` (in the result, the trace and the
    session log), so an aborted answer is not lost with the stream.
    """
    parts = []
    for item in shown:
        choices = item.get("choices") if isinstance(item, dict) else None
        if choices:
            text = (choices[0].get("delta") or {}).get("content")
            if isinstance(text, str):
                parts.append(text)
    return CancelledError(
        "LA-CANCELLED",
        f"run cancelled: {reason}",
        details={
            "reason": reason,
            "mode": "now",
            "exit_reason": "cancelled",
            "partial_content": "".join(parts),
        },
    )


def consumer_chunk(chunk: dict[str, Any]) -> Chunk:
    """``chunk`` as the consumer gets it: a :class:`~lightagent.chunks.Chunk` (a dict that
    also reads like the SDK's ``ChatCompletionChunk``); a usage-only chunk (``choices: []``)
    gains one empty choice, so ``chunk.choices[0].delta`` never breaks."""
    if chunk.get("choices"):
        return Chunk(chunk)
    return Chunk({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": None}]})


def output_event(effect: Any, trace_id: str | None) -> StreamEvent:
    """The event for a tool dict or error item the loop handed to the consumer."""
    return StreamEvent(effect.kind, effect.item, trace_id)


def done_event(result: RunResult) -> StreamEvent:
    """The last event of a stream: the run's result as a dict."""
    return StreamEvent("done", result.to_dict(), result.trace_id)


class ChunkScreen:
    """Holds streamed answer text back until the output guardrails have judged it.

    Wraps the interceptor's per-run ``OutputScreen`` (``feed(delta) -> releasable text``,
    ``rest(final) -> the remainder``): content deltas are rewritten to what may be shown,
    the answer's finish is deferred, and :meth:`release` gives the last chunk once the
    ``output_guardrail`` phase has passed. Text of a blocked answer is never shown.
    """

    __slots__ = ("finish", "last", "screen")

    def __init__(self, screen: Any) -> None:
        self.screen = screen
        self.finish: str | None = None
        self.last: dict[str, Any] | None = None

    def chunk(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """The chunk to show for ``item`` (None: nothing to show yet)."""
        choices = item.get("choices")
        if not choices:
            return item
        choice = choices[0]
        delta = choice.get("delta") or {}
        content = delta.get("content")
        finish = choice.get("finish_reason")
        if not content and finish not in ("stop", "length"):
            return item
        self.last = item
        shown = self.screen.feed(content) if content else ""
        new_delta = {k: v for k, v in delta.items() if k != "content"}
        if shown:
            new_delta["content"] = shown
        if finish in ("stop", "length"):
            self.finish, finish = finish, None
        if not shown and len(new_delta) == 0 and finish is None:
            return None
        return {**item, "choices": [{**choice, "delta": new_delta, "finish_reason": finish}]}

    def release(self, content: str | None) -> dict[str, Any]:
        """The closing chunk: the judged answer's remaining text, and its finish."""
        base = self.last or {"object": "chat.completion.chunk", "created": 0}
        rest = self.screen.rest(content)
        delta = {"content": rest} if rest else {}
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": self.finish or "stop"}],
        }


def new_screen(spec: Any) -> ChunkScreen | None:
    """A screen for the next streamed model call, when the interceptor judges output."""
    factory = getattr(spec.interceptor, "output_screen", None)
    if factory is None:
        return None
    screen = factory(spec.ctx)
    return ChunkScreen(screen) if screen is not None else None
