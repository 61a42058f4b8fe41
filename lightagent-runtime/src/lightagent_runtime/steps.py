"""The runtime's part in a run of a session: its inbox and its goals (:class:`RuntimeStep`).

The loop names no capability; this step does what it did for the long-task runtime:

- ``start``: read the session's inbox (an :class:`~lightagent_runtime.inbox_steps.InboxScan`)
  and open goals from the events the run's history was read from (no second read);
- ``before_request``: claim the session's pending inbox messages and append them as user
  messages, or end the run when the session was paused or its runs cancelled;
- ``finish``: check the open goals against the answer (``goal.completed`` /
  ``goal.updated`` events);
- ``end``: put their outcomes on the ``run_end`` event as ``goals``.

The step is the run's ``spec.extensions["runtime"]``: ``scan`` is its inbox read, which
also carries what other runs of the session consumed meanwhile (a session budget reads it).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.extensions import RunStep

from lightagent_runtime.goal_steps import check_goals, open_goals
from lightagent_runtime.inbox_steps import InboxScan, inbox_inject

__all__ = ["RuntimeStep"]


class RuntimeStep(RunStep):
    """One run of a session: its inbox read and its goals (see the module)."""

    #: Before the other steps: the inbox it injects counts in a context budget's fit.
    order = -10

    def __init__(self, checks: dict[str, Any]) -> None:
        #: The agent's ``goal_checks`` (name -> ``check(answer) -> bool``).
        self.checks = checks
        #: What the run has read of its session's inbox (an ``InboxScan``), or None.
        self.scan: InboxScan | None = None
        #: The session's open goals as read with the history, or None (read at the end).
        self.goals: dict[str, dict[str, Any]] | None = None
        #: The goals' outcomes at the run's end (``run_end`` data ``goals``).
        self.outcomes: list[dict[str, Any]] = []

    def start(
        self,
        spec: Any,
        st: Any,
        history: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Generator[Any, Any, None]:
        events = getattr(history, "events", None)
        if events is not None:
            scan = InboxScan()
            scan.feed(events)  # the run's inbox starts from the events it read anyway
            self.scan = scan
            self.goals = open_goals(events)
        return
        yield

    def before_request(
        self, spec: Any, st: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Generator[Any, Any, None]:
        yield from inbox_inject(spec, st, self, messages)

    def finish(self, spec: Any, st: Any, content: str | None) -> Generator[Any, Any, None]:
        st.stage = "goals"
        self.outcomes = yield from check_goals(spec, self.goals, content, self.checks)

    def end(self, spec: Any, st: Any, end: dict[str, Any]) -> None:
        if self.outcomes:
            end["goals"] = self.outcomes
