"""A tool call's progress: ``notifications/progress`` become ``mcp.progress`` events and keep
the call alive.

A call has two limits (the server's settings): ``timeout`` is an idle limit, the seconds the
call may go without its answer or a progress notification (each notification starts it
again); ``total_timeout`` bounds the whole call, progress or not (the SDK's own request
timeout). The SDK sends a progress token on every call that has a progress callback.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["EVENTS_KEPT", "MESSAGE_KEPT", "ProgressWatch"]

#: How much of a progress message an event keeps.
MESSAGE_KEPT = 500
#: How many ``mcp.progress`` events one call emits at most (later notifications still
#: start the idle clock again); the last one kept says ``last_kept: True``.
EVENTS_KEPT = 200

Report = Callable[[float, "float | None", "str | None"], None]


class ProgressWatch:
    """One call's idle clock, started again by each progress notification it receives.

    Pass the instance as the SDK's ``progress_callback`` and run the request inside
    :meth:`idle_clock`; ``report(progress, total, message)`` hears of each notification.
    """

    def __init__(self, idle: float, report: Report | None = None) -> None:
        self.idle = idle
        self.reports = 0
        self.idled = False
        #: Set by :meth:`lose`: the server is gone, the call was given up.
        self.lost = False
        self._report = report
        self._scope: Any = None

    @contextmanager
    def idle_clock(self) -> Iterator[None]:
        """Cancel the block after ``idle`` seconds without a notification (then ``idled`` is True)."""
        import anyio

        with anyio.CancelScope(deadline=anyio.current_time() + self.idle) as scope:
            self._scope = scope
            yield
        self._scope = None
        self.idled = scope.cancelled_caught and not self.lost

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Stop the idle clock while the block runs (we answer a request of the server's)."""
        import anyio

        if self._scope is not None:
            self._scope.deadline = math.inf
        try:
            yield
        finally:
            if self._scope is not None:
                self._scope.deadline = anyio.current_time() + self.idle

    def lose(self) -> None:
        """Give the call up now (its server is gone)."""
        self.lost = True
        if self._scope is not None:
            self._scope.cancel()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.reports += 1
        if self._scope is not None:
            import anyio

            self._scope.deadline = anyio.current_time() + self.idle
        if self._report is not None:
            self._report(progress, total, message)
