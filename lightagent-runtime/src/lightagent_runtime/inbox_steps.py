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

from lightagent_runtime.inbox import InboxScan, claim_pending

__all__ = ["InboxScan", "inbox_inject"]


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
