"""Self-learning: what an agent proposes to keep from a finished run.

``self_learning=True`` never writes into a prompt. What a run learned is a note, made here
from the run's own record — the request, the answer, which tools worked and which failed,
and the Tree-of-Thought reflection when the run planned — and handed to the memory layer as
an internal write (source ``reflection``, as the seeds name it, scope ``agent``, with
``kind="self_learning"`` in its metadata). The memory layer makes every
internal write a non-injectable ``MemoryCandidate``; it reaches a later prompt only once a
promotion decision (the policy, a hook or a person) approves it.

:func:`learning_note` is the one place that decides what the note says;
:func:`learning_scope` the provenance it is filed under.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "LEARNING_KIND",
    "LEARNING_SCOPE",
    "LEARNING_SOURCE",
    "MAX_NOTE_CHARS",
    "learning_note",
    "learning_scope",
]

#: The seeds' word for an agent's own evidence: a policy written for them
#: (``allowed_sources=("user", "reflection")``) matches a learning note.
LEARNING_SOURCE = "reflection"
#: What tells a learning note from other reflections (metadata ``kind``).
LEARNING_KIND = "self_learning"
LEARNING_SCOPE = "agent"
#: A note is a hint for next time, not a transcript.
MAX_NOTE_CHARS = 2000


def _names(calls: Iterable[Mapping[str, Any]], failed: bool) -> list[str]:
    out: list[str] = []
    for call in calls:
        name = call.get("name")
        if isinstance(name, str) and bool(call.get("error")) is failed and name not in out:
            out.append(name)
    return out


def learning_note(
    query: str | None,
    answer: str | None,
    tool_calls: Iterable[Mapping[str, Any]] = (),
    thought: Any = None,
) -> str | None:
    """The note a finished run proposes to remember, or None when there is nothing to learn.

    ``tool_calls`` are the run's records (``RunResult.tool_calls``); ``thought`` its
    ``Thought`` (``RunState.thought``), whose reflection says why a plan was chosen.
    """
    if (
        not isinstance(query, str)
        or not query.strip()
        or not isinstance(answer, str)
        or not answer.strip()
    ):
        return None
    calls = list(tool_calls)
    lines = [f"When asked: {query.strip()}"]
    reflection = getattr(thought, "reflection", None)
    if reflection:
        lines.append(f"Planning noted: {reflection}")
    worked, failed = _names(calls, False), _names(calls, True)
    if worked:
        lines.append(f"Tools that worked: {', '.join(worked)}")
    if failed:
        lines.append(f"Tools that failed: {', '.join(failed)}")
    lines.append(f"The agent answered: {answer.strip()}")
    note = "\n".join(lines)
    return note if len(note) <= MAX_NOTE_CHARS else note[: MAX_NOTE_CHARS - 3] + "..."


def learning_scope(agent_name: str | None) -> dict[str, Any]:
    """The provenance fields a learning note is written with (internal: it needs promotion)."""
    return {
        "source": LEARNING_SOURCE,
        "scope": LEARNING_SCOPE,
        "agent_name": agent_name,
        "metadata": {"kind": LEARNING_KIND},
    }
