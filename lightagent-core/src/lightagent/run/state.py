"""Per-run counters of the loop and the cancellation check (state lives in the run, never on the agent)."""

from __future__ import annotations

from typing import Any

from lightagent.errors import CancelledError
from lightagent.interceptors import RunContext
from lightagent.models.base import Usage

__all__ = ["RunState", "check_cancel"]


class RunState:
    """Mutable counters of one run (kept in the generator frame of the loop)."""

    __slots__ = (
        "call_index",
        "executed",
        "handoff",
        "model_requests",
        "offered",
        "query_message",
        "refused",
        "retries",
        "rounds",
        "stage",
        "thought",
        "usage",
    )

    def __init__(self) -> None:
        self.call_index = 0
        self.executed: list[dict[str, Any]] = []
        self.model_requests = 0
        self.retries = 0
        self.rounds = 0
        self.stage: str | None = None
        self.usage: Usage | None = None
        #: The handoff this run ended with (a ``Handoff``), or None.
        self.handoff: Any = None
        #: Calls refused before their round (call id -> the denial): the round reports them.
        self.refused: dict[str, Any] = {}
        #: The tool names the model was offered in this run (None: no tools were chosen);
        #: a call of any other name is answered as an unknown tool.
        self.offered: frozenset[str] | None = None
        #: The user message of this run's query (where the run's own turn begins).
        self.query_message: dict[str, Any] | None = None
        #: The Tree of Thought outcome (a ``Thought``), when the run planned.
        self.thought: Any = None


def check_cancel(ctx: RunContext, *, turn_boundary: bool = False) -> None:
    """Raise ``LA-CANCELLED`` when the run's token fired.

    At a turn boundary (before a model request) a ``stop_after_turn`` request ends the
    run too; inside a turn only :meth:`~lightagent.cancellation.CancellationToken.cancel` does.
    """
    token = ctx.cancellation
    if token is None:
        return
    if token.cancelled:
        raise CancelledError(
            "LA-CANCELLED",
            f"run cancelled: {token.reason}",
            details={"reason": token.reason, "mode": "now", "exit_reason": "cancelled"},
        )
    stop = getattr(token, "stop_requested", None) if turn_boundary else None
    if stop is not None:
        raise CancelledError(
            "LA-CANCELLED",
            f"run stopped after its turn: {stop}",
            hint="The transcript is complete: continue the session with a new run.",
            details={"reason": stop, "mode": "after_turn", "exit_reason": "stopped_after_turn"},
        )
