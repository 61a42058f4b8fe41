"""Reading and writing the run's transcript: pending tool calls, assistant messages, arguments."""

from __future__ import annotations

import json
from typing import Any

from lightagent.models.arguments import load_arguments
from lightagent.models.base import ModelResponse, ToolCall

__all__ = ["assistant_message", "loads", "pending_tool_calls", "unique_call_ids"]


def pending_tool_calls(
    messages: list[dict[str, Any]],
) -> tuple[list[ToolCall], dict[str, int], int]:
    """Tool calls of the current turn that have no result yet.

    Returns ``(pending calls, {call_id: position in the turn}, calls in the turn)``; the
    turn is everything after the last user message.
    """
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            start = i + 1
            break
    positions: dict[str, int] = {}
    answered: set[str] = set()
    last_calls: list[dict[str, Any]] = []
    count = 0
    for message in messages[start:]:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            # Numbered per call, as the live loop does; ids may repeat across rounds (Kimi's
            # ``functions.f:0``), so only results after this message answer its calls.
            last_calls = list(message["tool_calls"])
            answered = set()
            for call in last_calls:
                positions[call.get("id") or ""] = count
                count += 1
        elif role == "tool":
            answered.add(message.get("tool_call_id") or "")
    pending = []
    for index, call in enumerate(last_calls):
        call_id: str = call.get("id") or ""
        if call_id in answered:
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments")
        pending.append(
            ToolCall(
                id=call_id,
                name=function.get("name", ""),
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                index=index,
            )
        )
    return pending, positions, count


def unique_call_ids(response: ModelResponse) -> None:
    """Give each tool call of ``response`` its own id, in place.

    Some servers derive ids from the tool name, so two parallel calls to one tool share
    one; results are matched to calls by id, and providers reject a repeated id.
    """
    calls = response.tool_calls
    if len(calls) < 2 and all(c.id for c in calls):
        return
    seen: set[str] = set()
    for call in calls:
        if not call.id or call.id in seen:
            from lightagent.models.parse import new_call_id

            call.id = new_call_id()
            response.repairs.append("duplicate_call_id")
        seen.add(call.id)


def assistant_message(response: ModelResponse) -> dict[str, Any]:
    """The history message of a model answer, reasoning included."""
    # Reasoning stays in the history; the model's provider profile echoes, renames or drops it on send.
    return response.to_message(reasoning=True)


def loads(arguments: Any) -> Any:
    """Decoded JSON arguments, or the text itself when it is not JSON."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return load_arguments(arguments) if arguments.strip() else {}
    except ValueError:  # not JSON, or over the argument limits
        return arguments
