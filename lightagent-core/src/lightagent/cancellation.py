"""``CancellationToken``: a thread-safe, first-call-wins stop signal for runs."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["CancellationToken"]


class CancellationToken:
    """A stop signal shared between a caller and one or more runs.

    The agent loop checks it before each model call and each tool call (and between
    streamed chunks); a cancelled run ends with ``LA-CANCELLED``. ``cancel`` may be
    called from any thread; the first call wins and sets :attr:`reason`. A
    :meth:`child` token is cancelled with its parent but never cancels the parent.
    """

    __slots__ = (
        "__weakref__",
        "_callbacks",
        "_children",
        "_detach_callbacks",
        "_detach_reason",
        "_event",
        "_lock",
        "_parent",
        "_reason",
        "_stop_reason",
        "run_id",
        "token_id",
    )

    def __init__(
        self,
        *,
        token_id: str | None = None,
        parent: CancellationToken | None = None,
        run_id: str | None = None,
    ) -> None:
        import uuid

        #: The seeds' identifier for the token (a fresh one unless given).
        self.token_id: str = token_id or uuid.uuid4().hex
        self.run_id = run_id
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._parent: CancellationToken | None = None
        self._children: weakref.WeakSet[CancellationToken] = weakref.WeakSet()
        self._callbacks: list[Callable[[CancellationToken], Any]] = []
        self._stop_reason: str | None = None
        self._detach_reason: str | None = None
        self._detach_callbacks: list[Callable[[CancellationToken], Any]] = []
        if parent is not None:
            parent._adopt(self)  # the seeds' parent=: the same link as parent.child()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called on this token or an ancestor."""
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        """The reason given by the first :meth:`cancel` call, else None."""
        return self._reason

    def cancel(self, reason: str = "cancelled") -> bool:
        """Cancel this token and its children; True only for the call that cancelled it."""
        with self._lock:
            if self._event.is_set():
                return False
            self._reason = reason
            self._event.set()
            children = list(self._children)
            callbacks, self._callbacks = self._callbacks, []
        for child in children:
            child.cancel(reason)
        self._notify(callbacks)
        return True

    def _notify(self, callbacks: list[Any]) -> None:
        for callback in callbacks:
            try:
                callback(self)
            except Exception:  # a failing listener must not stop the others
                pass

    def stop_after_turn(self, reason: str = "stop requested") -> bool:
        """Let the current turn finish, then stop: the run ends before its next model request.

        A turn is a model answer and its whole tool round, so the transcript stays complete
        (every call has its result) and the session can be continued. Unlike :meth:`cancel`
        it interrupts nothing; :attr:`cancelled` stays False. True for the first call only.
        """
        with self._lock:
            if self._stop_reason is not None:
                return False
            self._stop_reason = reason
            children = list(self._children)
        for child in children:
            child.stop_after_turn(reason)
        return True

    @property
    def stop_requested(self) -> str | None:
        """The reason of :meth:`stop_after_turn` (on this token or an ancestor), else None."""
        if self._stop_reason is not None:
            return self._stop_reason
        parent = self._parent
        return parent.stop_requested if parent is not None else None

    def detach(self, reason: str = "detached") -> bool:
        """Let the run go on in the background as a job; its caller stops waiting for it.

        Only a run started detachable (``agent.arun_detachable``) can be detached: its
        caller gets a result naming the job (``details["job_id"]``), and the run carries on
        under the job's own token. Not passed to child tokens. True for the first call only.
        """
        with self._lock:
            if self._detach_reason is not None:
                return False
            self._detach_reason = reason
            callbacks, self._detach_callbacks = self._detach_callbacks, []
        self._notify(callbacks)
        return True

    @property
    def detach_requested(self) -> str | None:
        """The reason of :meth:`detach`, else None."""
        return self._detach_reason

    def on_detach(self, callback: Callable[[CancellationToken], Any]) -> None:
        """Call ``callback(token)`` once when :meth:`detach` is called (at once if it was)."""
        with self._lock:
            if self._detach_reason is None:
                self._detach_callbacks.append(callback)
                return
        callback(self)

    def unlink(self) -> None:
        """Stop following the parent: its later ``cancel``/``stop_after_turn`` no longer reach this token."""
        parent = self._parent
        if parent is not None:
            with parent._lock:
                parent._children.discard(self)
            self._parent = None

    @property
    def parent(self) -> CancellationToken | None:
        """The token this one is a child of (None for a root token)."""
        return self._parent

    def child(self, *, run_id: str | None = None) -> CancellationToken:
        """A token cancelled together with this one (but cancellable on its own)."""
        return CancellationToken(parent=self, run_id=run_id)

    def _adopt(self, token: CancellationToken) -> None:
        token._parent = self
        with self._lock:
            if not self._event.is_set():
                self._children.add(token)
                return
        token.cancel(self._reason or "cancelled")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; returns :attr:`cancelled`."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[CancellationToken], Any]) -> None:
        """Call ``callback(token)`` once when cancelled (at once if it already is)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def raise_if_cancelled(self) -> None:
        """Raise :class:`~lightagent.errors.CancelledError` (``LA-CANCELLED``) if cancelled."""
        if self._event.is_set():
            from lightagent.errors import CancelledError

            raise CancelledError(
                "LA-CANCELLED", f"run cancelled: {self._reason}", details={"reason": self._reason}
            )

    def __repr__(self) -> str:
        state = f"cancelled={self._reason!r}" if self.cancelled else "active"
        return f"CancellationToken({state})"
