"""The loop's inbox decision (written once, for both drivers): inject at a step boundary.

:func:`inbox_inject` runs before each model request — after a tool round has all its
results, never between a call and its result — and appends the session's pending inbox
messages as user messages. The claim itself (exactly once, across processes) is the
``ClaimInbox`` effect a driver performs through the session binding.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.run.effects import ClaimInbox
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

__all__ = ["InboxScan", "inbox_inject"]


class InboxScan:
    """What one run has read of its session's inbox: a cursor and the unclaimed messages."""

    __slots__ = ("cursor", "pending")

    def __init__(self) -> None:
        #: The last sequence read; ``-1``: nothing read yet (the first claim reads the log).
        self.cursor = -1
        #: message_id -> its ``inbox.enqueued`` event, in log order.
        self.pending: dict[str, Any] = {}

    def feed(self, events: list[Any]) -> None:
        """Take in events read after :attr:`cursor`."""
        for event in events:
            if event.type == "inbox.enqueued":
                mid = event.data.get("message_id")
                if isinstance(mid, str):
                    self.pending.setdefault(mid, event)
            elif event.type == "inbox.claimed":
                self.pending.pop(str(event.data.get("message_id")), None)
            self.cursor = max(self.cursor, event.sequence)
        self.cursor = max(self.cursor, 0)


def inbox_inject(
    spec: RunSpec, st: RunState, messages: list[dict[str, Any]]
) -> Generator[Any, Any, None]:
    """Claim and append the pending inbox messages of the run's session (none without one)."""
    ctx = spec.ctx
    if spec.binding is None or not ctx.session_id:
        return
    if st.inbox is None:
        st.inbox = InboxScan()  # no history was read: the first claim reads the log
    texts = yield ClaimInbox(ctx.session_id, st.inbox)
    for text in texts or ():
        messages.append({"role": "user", "content": text})
    if texts and ctx.active:
        # for the run's trace only: the session log already holds the inbox.claimed events
        ctx.emit("inbox_injected", {"count": len(texts), "request_index": st.model_requests + 1})
