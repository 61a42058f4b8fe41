"""Repeated-call and no-progress detection, consulted after each tool round of the loop.

A call is *repeated* when the same tool with the same arguments returns an output the run
has already seen from it (no new information). :class:`ProgressPolicy` says how many of
those, and how many tool rounds in a row with no new output at all, the run tolerates;
then it either stops the run (``LA-NO-PROGRESS``, a typed exit reason) or redirects it
once with a note to the model, and stops it if it stalls again. Each stall is a
``progress_stalled`` event (``progress.stalled`` in the session log).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lightagent.errors import BudgetError, ConfigurationError
from lightagent.utf8 import utf8

__all__ = ["ProgressPolicy", "ProgressState", "as_progress_policy", "progress_after_round"]

_ACTIONS = ("stop", "redirect")

REDIRECT_NOTE = (
    "Note from the runtime: {what}. Calling it again will not give new information. "
    "Answer with what you already have, or try a different tool or different arguments."
)


@dataclass(frozen=True)
class ProgressPolicy:
    """When a run counts as stalled and what the loop then does.

    ``max_repeated_tool_calls``: the same tool, arguments and output this many times.
    ``max_unchanged_steps``: this many tool rounds in a row without any new output.
    ``action``: ``"stop"`` ends the run with ``LA-NO-PROGRESS``; ``"redirect"`` tells the
    model once, and stops the run the next time it stalls.
    """

    max_repeated_tool_calls: int = 3
    max_unchanged_steps: int = 3
    action: str = "stop"

    def __post_init__(self) -> None:
        for name in ("max_repeated_tool_calls", "max_unchanged_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"ProgressPolicy({name}={value!r}) must be an integer >= 2",
                    hint="A first repeat is normal (a retry); count from 2 upwards.",
                    details={"parameter": name},
                )
        if self.action not in _ACTIONS:
            raise ConfigurationError(
                "LA-CONFIG",
                f"ProgressPolicy(action={self.action!r}) must be 'stop' or 'redirect'",
                hint="Use action='stop' (end the run) or 'redirect' (tell the model once).",
                details={"parameter": "action"},
            )


def as_progress_policy(value: Any) -> ProgressPolicy | None:
    """``progress_policy=``: a :class:`ProgressPolicy`, a dict of its fields, True, or None."""
    if value is None or value is False:
        return None
    if value is True:
        return ProgressPolicy()
    if isinstance(value, ProgressPolicy):
        return value
    if isinstance(value, dict):
        try:
            return ProgressPolicy(**value)
        except TypeError as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"progress_policy= has an unknown field: {exc}",
                hint="The fields are max_repeated_tool_calls, max_unchanged_steps, action.",
            ) from exc
    raise ConfigurationError(
        "LA-CONFIG",
        f"progress_policy= must be a ProgressPolicy, a dict, True or None, got {type(value).__name__}",
        hint="Pass progress_policy=ProgressPolicy(max_repeated_tool_calls=3).",
    )


class ProgressState:
    """One run's memory of what its tool calls returned (state of the run, not the agent)."""

    def __init__(self, policy: ProgressPolicy) -> None:
        self.policy = policy
        self.seen: dict[str, int] = {}  # digest of (tool, arguments, output) -> times seen
        self.unchanged = 0
        self.redirected = False

    def record(self, calls: Iterable[tuple[str, str, str]]) -> dict[str, Any] | None:
        """Record a round of ``(tool, arguments, output)``; a stall's description, or None."""
        new = False
        worst: tuple[int, str, str] | None = None
        for name, arguments, output in calls:
            key = _digest(name, arguments, output)
            count = self.seen.get(key, 0) + 1
            self.seen[key] = count
            if count == 1:
                new = True
            elif worst is None or count > worst[0]:
                worst = (count, name, arguments)
        self.unchanged = 0 if new else self.unchanged + 1
        if worst is not None and worst[0] >= self.policy.max_repeated_tool_calls:
            count, name, arguments = worst
            return {
                "reason": "repeated_tool_call",
                "tool": name,
                "arguments": arguments,
                "count": count,
                "what": f"{name} was called {count} times with the same arguments and "
                "returned the same output",
            }
        if self.unchanged >= self.policy.max_unchanged_steps:
            return {
                "reason": "no_progress",
                "steps": self.unchanged,
                "what": f"the last {self.unchanged} tool rounds returned nothing new",
            }
        return None


def _digest(name: str, arguments: str, output: str) -> str:
    try:  # the same arguments in another key order or spacing are the same call
        arguments = json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        pass
    text = json.dumps([name, arguments, output], ensure_ascii=False)
    return hashlib.sha256(utf8(text)).hexdigest()


def progress_after_round(
    spec: Any, state: ProgressState | None, calls: Iterable[Any], messages: list[dict[str, Any]]
) -> None:
    """The loop's decision after a tool round: continue, redirect (a note), or stop."""
    if state is None:
        return
    outputs: dict[Any, Any] = {}
    for message in reversed(messages):  # this round's results follow its assistant message
        if message.get("role") != "tool":
            break
        outputs[message.get("tool_call_id")] = message.get("content")
    stall = state.record(
        (call.name, call.arguments or "", str(outputs.get(call.id, ""))) for call in calls
    )
    if stall is None:
        return
    ctx = spec.ctx
    redirect = state.policy.action == "redirect" and not state.redirected
    data = {k: v for k, v in stall.items() if k != "what"}
    if ctx.active:
        ctx.emit("progress_stalled", {**data, "action": "redirect" if redirect else "stop"})
    if redirect:
        state.redirected = True
        state.unchanged = 0
        # after the tool results: a step boundary, never between a call and its result
        messages.append({"role": "user", "content": REDIRECT_NOTE.format(what=stall["what"])})
        return
    raise BudgetError(
        "LA-NO-PROGRESS",
        f"the run made no progress: {stall['what']}",
        hint="Give the tool what it needs to return something new, raise "
        "ProgressPolicy(max_repeated_tool_calls=/max_unchanged_steps=), or use action='redirect'.",
        details={"exit_reason": stall["reason"], **data},
    )
