"""``ContextProjector``: conversation history, exact model requests and the trace view, from events.

The history it builds is always valid for an OpenAI-compatible provider: each
assistant ``tool_calls`` message is followed by exactly one ``tool`` message per call
(a call whose result was never recorded — a crash — gets a synthesized "interrupted"
result), orphan or duplicate tool messages are dropped, and :func:`trim_messages`
never separates a call from its results. Every repair is listed in
:attr:`Projection.repairs`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ValidationError
from lightagent.events.mapping import trace_type_of
from lightagent.events.model import SessionEvent

__all__ = [
    "INTERRUPTED_RESULT",
    "MISSING_RESULT",
    "SUMMARY_PREFIX",
    "ContextProjector",
    "Projection",
    "TurnView",
    "resolve_request",
    "trim_messages",
]

#: How a compaction summary is introduced to the model (also used by the runtime's
#: ``ContextCompactor``).
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"

INTERRUPTED_RESULT = (
    "[interrupted] This tool call did not complete (the run stopped before its result was "
    "recorded); its outcome is unknown."
)
MISSING_RESULT = "[no result recorded] This tool call has no recorded result."


@dataclass
class TurnView:
    """One run's events and status (``completed``, ``failed`` or ``incomplete``)."""

    run_id: str
    status: str
    events: list[SessionEvent] = field(default_factory=list)
    query: str | None = None

    @property
    def first_sequence(self) -> int:
        """Sequence of the turn's first event."""
        return self.events[0].sequence if self.events else 0


@dataclass
class Projection:
    """A projected history and the repairs made to keep it provider-valid."""

    messages: list[dict[str, Any]]
    repairs: list[dict[str, Any]] = field(default_factory=list)
    turns: list[TurnView] = field(default_factory=list)


def group_turns(events: Iterable[SessionEvent]) -> list[TurnView]:
    """Events grouped by run (in order of each run's first event), with a status each."""
    turns: dict[str, TurnView] = {}
    for event in events:
        run_id = event.turn_id or event.run_id
        if not run_id:
            continue
        turn = turns.get(run_id)
        if turn is None:
            turn = turns[run_id] = TurnView(run_id, "incomplete")
        turn.events.append(event)
        if event.type == "turn.started" and turn.query is None:
            query = event.data.get("query")
            turn.query = query if isinstance(query, str) else None
        elif event.type in ("run.completed", "turn.completed"):
            turn.status = "completed"
        elif event.type in ("run.failed", "turn.failed"):
            turn.status = "failed"
        elif event.type in ("turn.started", "run.resumed") and event.data.get("resumed"):
            turn.status = "incomplete"  # a resumed run is open again until it ends
    return list(turns.values())


def resolve_request(by_seq: dict[int, SessionEvent], event: SessionEvent) -> dict[str, Any]:
    """The exact request of a ``model.requested`` event (stored requests may reference earlier ones)."""
    request = event.data.get("request")
    if not isinstance(request, dict):
        return {}
    out = {k: v for k, v in request.items() if not k.startswith("$")}
    base_seq = request.get("$base")
    if base_seq is not None:
        base_event = by_seq.get(base_seq)
        if base_event is None or base_event.sequence >= event.sequence:
            raise ValidationError(
                "LA-VALIDATION",
                f"model.requested at {event.sequence} references a missing request {base_seq}.",
            )
        base = resolve_request(by_seq, base_event)
        prefix = int(request.get("$prefix", 0))
        out["messages"] = list(base.get("messages", []))[:prefix] + list(request.get("$tail", []))
        if request.get("$same_tools"):
            out["tools"] = base.get("tools")
    return out


class ContextProjector:
    """Rebuilds conversation context, exact model requests and trace views from events."""

    def __init__(self, *, include_system: bool = False) -> None:
        self.include_system = include_system

    # -- history -------------------------------------------------------------

    def project(
        self,
        events: Sequence[SessionEvent],
        *,
        through_sequence: int | None = None,
        turn_id: str | None = None,
        skip_unstarted: bool = False,
    ) -> Projection:
        """The provider-valid history of ``events`` (up to ``through_sequence``, or one turn).

        ``skip_unstarted`` leaves out open runs that have not reached the model yet —
        among them the run that is loading this history right now.
        """
        chosen = [e for e in events if through_sequence is None or e.sequence <= through_sequence]
        turns = group_turns(chosen)
        if turn_id is not None:
            turns = [t for t in turns if t.run_id == turn_id]
        compacted = next(
            (
                e
                for e in reversed(chosen)
                # a run's own request compaction (scope "request") leaves the history whole
                if e.type == "context.compacted" and e.data.get("scope") != "request"
            ),
            None,
        )
        prefix: list[dict[str, Any]] = []
        if compacted is not None:
            # Turns the compaction covered are replaced by its summary (if it made one).
            cut = int(compacted.data.get("through_sequence") or 0)
            turns = [t for t in turns if t.first_sequence > cut]
            summary = compacted.data.get("summary")
            if isinstance(summary, str) and summary:
                prefix.append({"role": "user", "content": SUMMARY_PREFIX + summary})
        if skip_unstarted:
            turns = [
                t
                for t in turns
                if t.status != "incomplete" or any(e.type == "model.requested" for e in t.events)
            ]
        messages: list[dict[str, Any]] = prefix
        repairs: list[dict[str, Any]] = []
        for turn in turns:
            raw = self._turn_messages(turn)
            if raw and _repeats_handoff(turn, raw[0], messages):
                raw = raw[1:]  # a handoff's target answers the question once asked
            messages.extend(_repair(raw, turn, repairs))
        return Projection(messages, repairs, turns)

    def messages(
        self,
        events: Sequence[SessionEvent],
        *,
        through_sequence: int | None = None,
        turn_id: str | None = None,
        skip_unstarted: bool = False,
    ) -> list[dict[str, Any]]:
        """:meth:`project`'s messages only."""
        return self.project(
            events,
            through_sequence=through_sequence,
            turn_id=turn_id,
            skip_unstarted=skip_unstarted,
        ).messages

    def _turn_messages(self, turn: TurnView) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        asked = False
        for event in turn.events:
            kind, data = event.type, event.data
            if kind == "turn.started":
                query = data.get("query")
                # A restarted run records turn.started again: its question counts once.
                if isinstance(query, str) and not data.get("resumed") and not asked:
                    out.append({"role": "user", "content": query})
                    asked = True
            elif kind == "message.received":
                message = data.get("message")
                if isinstance(message, dict) and (
                    self.include_system or message.get("role") != "system"
                ):
                    out.append(copy.deepcopy(message))
            elif kind == "inbox.claimed":
                # an inbox message the run took in at a step boundary, where it was injected
                if isinstance(data.get("content"), str):
                    out.append({"role": "user", "content": data["content"]})
            elif kind == "assistant.completed":
                message = data.get("message")
                if isinstance(message, dict):
                    out.append(copy.deepcopy(message))
                elif isinstance(data.get("content"), str):
                    out.append({"role": "assistant", "content": data["content"]})
            elif kind == "tool.completed":
                call_id = data.get("call_id")
                output = data.get("output")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": output if isinstance(output, str) else _text(output),
                    }
                )
        return out

    # -- requests and trace --------------------------------------------------

    def model_request(self, events: Sequence[SessionEvent], *, sequence: int) -> dict[str, Any]:
        """The exact request (messages, tools, …) recorded at ``sequence``."""
        by_seq = {e.sequence: e for e in events}
        event = by_seq.get(sequence)
        if event is None or event.type != "model.requested":
            raise ValidationError(
                "LA-VALIDATION", f"No model.requested event at sequence {sequence}."
            )
        return resolve_request(by_seq, event)

    def trace(
        self, events: Sequence[SessionEvent], *, turn_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The seeds-compatible trace view (``{type, data, trace_id, …}``) of the events."""
        by_seq = {e.sequence: e for e in events}
        out = []
        for event in events:
            if turn_id is not None and (event.turn_id or event.run_id) != turn_id:
                continue
            trace_type = trace_type_of(event)
            if trace_type is None:
                continue
            data = {k: v for k, v in event.data.items() if k not in ("trace_type", "trace_seq")}
            if event.type == "model.requested" and isinstance(data.get("request"), dict):
                data["request"] = resolve_request(by_seq, event)
            out.append(
                {
                    "type": trace_type,
                    "data": data,
                    "trace_id": event.trace_id,
                    "parent_trace_id": event.parent_trace_id,
                    "run_group_id": event.run_group_id,
                    "timestamp": event.timestamp,
                    "run_id": event.run_id,
                    "seq": event.data.get("trace_seq"),
                }
            )
        return out


def _repeats_handoff(turn: TurnView, first: dict[str, Any], before: list[dict[str, Any]]) -> bool:
    """Whether a turn a handoff started opens with the question the conversation already has."""
    started = next((e for e in turn.events if e.type == "turn.started"), None)
    if started is None or not started.data.get("handoff") or first.get("role") != "user":
        return False
    asked = next((m for m in reversed(before) if m.get("role") == "user"), None)
    return asked is not None and asked.get("content") == first.get("content")


def _text(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _repair(
    messages: list[dict[str, Any]], turn: TurnView, repairs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Pair every tool call with exactly one result; drop results without a call."""
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []
    answered: set[str] = set()
    filler = INTERRUPTED_RESULT if turn.status != "completed" else MISSING_RESULT

    def close_open() -> None:
        for call_id in open_calls:
            out.append({"role": "tool", "tool_call_id": call_id, "content": filler})
            repairs.append(
                {"repair": "synthesized_result", "call_id": call_id, "run_id": turn.run_id}
            )
        open_calls.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_calls:
                open_calls.remove(call_id)
                answered.add(call_id)
                out.append(message)
            else:
                kind = "duplicate_result" if call_id in answered else "orphan_result"
                repairs.append({"repair": kind, "call_id": call_id, "run_id": turn.run_id})
            continue
        close_open()
        out.append(message)
        if role == "assistant" and message.get("tool_calls"):
            ids = []
            for call in message["tool_calls"]:
                call_id = call.get("id")
                if call_id and call_id not in ids:
                    ids.append(call_id)
            open_calls.extend(ids)
    close_open()
    return out


def trim_messages(messages: Sequence[dict[str, Any]], max_messages: int) -> list[dict[str, Any]]:
    """Leading system messages plus at most ``max_messages`` of the rest, never starting
    inside a tool-call group (an assistant ``tool_calls`` message stays with its results)."""
    if not isinstance(max_messages, int) or max_messages < 0:
        raise ValidationError(
            "LA-VALIDATION", f"max_messages must be an int >= 0, not {max_messages!r}."
        )
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    rest = list(messages[head:])
    cut = max(0, len(rest) - max_messages)
    # Move the cut forward past tool results so no group loses its assistant message.
    while cut < len(rest) and rest[cut].get("role") == "tool":
        cut += 1
    return list(messages[:head]) + rest[cut:]
