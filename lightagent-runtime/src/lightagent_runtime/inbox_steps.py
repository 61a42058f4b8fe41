"""The run's inbox decision (written once, for both drivers): inject at a step boundary.

:func:`inbox_inject` runs before each model request — after a tool round has all its
results, never between a call and its result — and appends the session's pending inbox
messages as user messages. The claim itself (exactly once, across processes) is a
``SessionCall`` effect a driver performs on the session's store
(:func:`lightagent_runtime.inbox.claim_pending`).
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any

from lightagent.errors import CancelledError
from lightagent.run.effects import SessionCall
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

__all__ = ["InboxScan", "inbox_inject"]


class InboxScan:
    """What one run has read of its session's inbox: a cursor, the unclaimed messages, and
    whether the session was paused (``runtime.paused``, or the 0.11 form ``session.paused``)
    or its runs cancelled (``runtime.cancelled`` / ``session.cancelled``, counted only once
    the run has read its history)."""

    __slots__ = ("cancelled", "cursor", "foreign_spent", "paused", "pending", "run_id")

    def __init__(self) -> None:
        #: The last sequence read; ``-1``: nothing read yet (the first claim reads the log).
        self.cursor = -1
        #: message_id -> its ``inbox.enqueued`` event, in log order.
        self.pending: dict[str, Any] = {}
        #: The reason of the session's standing pause, or None.
        self.paused: str | None = None
        #: The reason of a cancel recorded while this run was running, or None.
        self.cancelled: str | None = None
        #: The run reading: its own ``budget.consumed`` events are already in its ledger.
        self.run_id: str | None = None
        #: What other runs of the session consumed since this run read its history, not
        #: yet taken into its session budget (:meth:`take_foreign_spent`).
        self.foreign_spent: dict[str, float] = {}

    def feed(self, events: list[Any]) -> None:
        """Take in events read after :attr:`cursor`."""
        live = self.cursor >= 0  # a cancel in the history read at the start is an old one
        for event in events:
            kind = event.type
            if kind == "inbox.enqueued":
                mid = event.data.get("message_id")
                if isinstance(mid, str):
                    self.pending.setdefault(mid, event)
            elif kind in ("inbox.claimed", "inbox.rejected"):
                self.pending.pop(str(event.data.get("message_id")), None)
            elif kind in ("runtime.paused", "session.paused"):
                self.paused = str(event.data.get("reason") or "paused")
            elif kind in ("runtime.resumed", "session.resumed"):
                self.paused = None
            elif kind in ("runtime.cancelled", "session.cancelled") and live:
                self.cancelled = str(event.data.get("reason") or "cancelled")
            elif kind == "budget.consumed" and live and event.run_id != self.run_id:
                for key, value in (event.data.get("delta") or {}).items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self.foreign_spent[key] = self.foreign_spent.get(key, 0.0) + value
            self.cursor = max(self.cursor, event.sequence)
        self.cursor = max(self.cursor, 0)

    def take_foreign_spent(self) -> dict[str, float]:
        """What other runs consumed since the last take (then forgotten here)."""
        spent, self.foreign_spent = self.foreign_spent, {}
        return spent

    @property
    def halted(self) -> bool:
        """Whether the run must stop (paused or cancelled): nothing is claimed then."""
        return self.paused is not None or self.cancelled is not None


def inbox_inject(
    spec: RunSpec, st: RunState, runtime: Any, messages: list[dict[str, Any]]
) -> Generator[Any, Any, None]:
    """Claim and append the pending inbox messages of the run's session (none without one).

    ``runtime`` is the run's step: its ``scan`` is what the run has read of the inbox.
    """
    ctx = spec.ctx
    if spec.binding is None or not ctx.session_id:
        return
    if runtime.scan is None:
        runtime.scan = InboxScan()  # no history was read: the first claim reads the log
    scan: InboxScan = runtime.scan
    texts = yield SessionCall(ctx.session_id, partial(_claim, scan=scan))
    _stop_if_halted(scan)
    for text in texts or ():
        messages.append({"role": "user", "content": text})
    if texts and ctx.active:
        # for the run's trace only: the session log already holds the inbox.claimed events
        ctx.emit("inbox_injected", {"count": len(texts), "request_index": st.model_requests + 1})


def _claim(store: Any, session_id: str, run_id: str, *, scan: InboxScan) -> list[str]:
    """The claim, on the session's store (``claim_pending``): the texts claimed."""
    from lightagent_runtime.inbox import claim_pending

    return claim_pending(store, session_id, run_id, scan)


def _stop_if_halted(scan: InboxScan) -> None:
    """End the run at this step boundary when the session was paused or cancelled."""
    if scan.cancelled is not None:
        raise CancelledError(
            "LA-CANCELLED",
            f"run cancelled through the session: {scan.cancelled}",
            details={"reason": scan.cancelled, "mode": "now", "exit_reason": "cancelled"},
        )
    if scan.paused is not None:
        raise CancelledError(
            "LA-CANCELLED",
            f"the session is paused: {scan.paused}",
            hint="Resume the session (agent.runtime.resume()), then continue it with a new run.",
            details={"reason": scan.paused, "mode": "paused", "exit_reason": "paused"},
        )
