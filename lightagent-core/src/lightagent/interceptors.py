"""The loop's seams: the per-run :class:`RunContext`, observers and phase interceptors.

The agent loop calls an :class:`Interceptor` at each phase (hooks, guardrails, policy and
approval are built on it) and fans every trace event out to :class:`RunObserver` s
(session recording, exporters). Both see the same :class:`RunContext`, which belongs to
one run only.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ConfigurationError, PolicyError, StorageError

__all__ = [
    "CONTINUE",
    "PHASES",
    "PHASE_ACTIONS",
    "Interceptor",
    "PhaseOutcome",
    "RunContext",
    "RunObserver",
    "add_global_observer",
    "global_observers",
    "remove_global_observer",
]

_log = logging.getLogger("lightagent.run")

#: Phases the loop calls, in the order a run meets them.
PHASES = (
    "before_run",
    "input_guardrail",
    "before_memory_retrieve",
    "after_memory_retrieve",
    "before_model_request",
    "after_model_response",
    "before_tool_call",
    "tool_guardrail",
    "after_tool_result",
    "output_guardrail",
    "before_memory_write",
    "after_memory_write",
    "after_run",
    "on_error",
    "on_handoff",
)
#: What an interceptor may answer.
PHASE_ACTIONS = ("continue", "replace", "block", "retry", "fallback")


@runtime_checkable
class RunObserver(Protocol):
    """Receives every trace event of a run. Failures are recorded, never raised.

    An observer may also define ``async def aon_event(run, event)``; the async driver
    awaits it instead of calling :meth:`on_event`. One with ``wants_tool_finished = True``
    also gets a ``tool_finished`` event the moment each tool call returns (tracing uses
    it to time parallel calls; durable logs get it anyway).
    """

    def on_event(self, run: RunContext, event: dict[str, Any]) -> None:
        """Handle one event (``{type, data, trace_id, run_id, seq, timestamp, …}``)."""
        ...


@dataclass
class PhaseOutcome:
    """An interceptor's answer for one phase.

    ``continue`` goes on; ``replace`` swaps the phase payload for ``payload``; ``block``
    stops the run (or denies one tool call at the tool phases); ``retry`` repeats the
    model call; ``fallback`` gives ``payload`` as the answer.
    """

    action: str = "continue"
    payload: Any = None
    reason: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


#: The shared "nothing to do" answer (never mutate it).
CONTINUE = PhaseOutcome()

# Process-wide observers (instrumentation). A tuple, replaced whole under the lock, so
# a run reads it without locking.
_GLOBAL_OBSERVERS: tuple[Any, ...] = ()
_GLOBAL_LOCK = threading.Lock()


def add_global_observer(observer: Any) -> None:
    """Hand the events of every run started from now on, in this process, to ``observer``.

    The seam for instrumentation (OpenTelemetry, metrics): each new agent run attaches
    it as if passed to ``LightAgent(observers=...)``, and LightFlow runs and LightDAG
    attempts call its ``on_event(source, event)`` with their events too. Failures are
    isolated like any observer's. Adding the same object twice has no effect; runs
    already started keep the observers they began with.
    """
    global _GLOBAL_OBSERVERS
    if not callable(getattr(observer, "on_event", None)):
        raise ConfigurationError(
            "LA-CONFIG",
            f"a run observer needs on_event(run, event), got {type(observer).__name__}",
        )
    with _GLOBAL_LOCK:
        if not any(o is observer for o in _GLOBAL_OBSERVERS):
            _GLOBAL_OBSERVERS = (*_GLOBAL_OBSERVERS, observer)


def remove_global_observer(observer: Any) -> None:
    """Stop handing new runs to ``observer`` (no error when it was not added)."""
    global _GLOBAL_OBSERVERS
    with _GLOBAL_LOCK:
        _GLOBAL_OBSERVERS = tuple(o for o in _GLOBAL_OBSERVERS if o is not observer)


def global_observers() -> tuple[Any, ...]:
    """The observers added with :func:`add_global_observer`, in the order added."""
    return _GLOBAL_OBSERVERS


@runtime_checkable
class Interceptor(Protocol):
    """Called by the loop at each phase; sync form for ``run``, async for ``arun``."""

    def on_phase_sync(self, run: RunContext, phase: str, payload: dict[str, Any]) -> PhaseOutcome:
        """Decide on ``phase`` from a sync driver."""
        ...

    async def on_phase(self, run: RunContext, phase: str, payload: dict[str, Any]) -> PhaseOutcome:
        """Decide on ``phase`` from the async driver."""
        ...


@dataclass(eq=False)
class RunContext:
    """Everything that identifies one run, and its trace. Never shared between runs.

    ``emit`` appends an event to :attr:`trace` (when the run records a trace) and hands
    it to each observer. An observer that raises is logged and noted in
    :attr:`observer_errors`; the run goes on.
    """

    run_id: str
    trace_id: str
    agent_name: str
    user_id: str = "default_user"
    session_id: str | None = None
    parent_trace_id: str | None = None
    run_group_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)
    observers: list[Any] = field(default_factory=list)
    #: Whether events are kept in :attr:`trace` (``run(trace=True)``).
    record: bool = False
    idempotency_key: str | None = None
    approval_id: str | None = None
    cancellation: Any = None
    #: The tenant the run acts for (the agent's security context, or ``metadata["tenant_id"]``).
    tenant_id: str | None = None
    #: Who the run acts for, as its session records it (``owner_of`` the agent and user).
    owner: dict[str, str] | None = None
    observer_errors: list[dict[str, Any]] = field(default_factory=list)
    _seq: int = field(default=0, repr=False)
    #: Set by the async driver: events for observers with ``aon_event`` wait here.
    _pending: list[tuple[Any, dict[str, Any]]] | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        """Whether events go anywhere; the loop builds event payloads only when True."""
        return self.record or bool(self.observers)

    def attach(self, observers: Iterable[Any]) -> None:
        """Add observers for the rest of this run."""
        self.observers.extend(observers)

    def emit(self, type: str, data: dict[str, Any]) -> dict[str, Any]:
        """Record one event of the seeds' trace vocabulary and fan it out to observers."""
        self._seq += 1
        event = {
            "type": type,
            "data": data,
            "trace_id": self.trace_id,
            "parent_trace_id": self.parent_trace_id,
            "run_group_id": self.run_group_id,
            "timestamp": time.time(),
            "run_id": self.run_id,
            "seq": self._seq,
        }
        if self.record:
            self.trace.append(event)
        pending = self._pending
        for observer in tuple(self.observers):
            if pending is not None and hasattr(observer, "aon_event"):
                pending.append((observer, event))
                continue
            try:
                observer.on_event(self, event)
            except Exception as exc:
                self._observer_failed(observer, event, exc)
        return event

    async def aflush(self) -> None:
        """Await the async observers for the events emitted since the last flush."""
        pending = self._pending
        if not pending:
            return
        batch = list(pending)
        pending.clear()
        for observer, event in batch:
            if observer not in self.observers:
                continue  # detached after failing closed
            try:
                await observer.aon_event(self, event)
            except Exception as exc:
                self._observer_failed(observer, event, exc)

    def _observer_failed(self, observer: Any, event: dict[str, Any], exc: Exception) -> None:
        record = {
            "observer": type(observer).__name__,
            "event_type": event.get("type"),
            "seq": event.get("seq"),
            "error": f"{type(exc).__name__}: {exc}",
        }
        self.observer_errors.append(record)
        if getattr(observer, "fail_closed", False) and isinstance(exc, PolicyError):
            self.observers.remove(observer)
            raise exc  # a refusal (e.g. LA-SESSION-OWNER) keeps its own code
        if getattr(observer, "fail_closed", False):
            # A durable log that missed an event must stop the run before the next side
            # effect: resume can only skip or reconcile what the log has seen.
            self.observers.remove(observer)
            raise StorageError(
                "LA-SESSION",
                f"the run's event log could not record {record['event_type']!r}; "
                f"the run stops before any further side effect. Cause: {_cause(exc)}",
                hint=getattr(exc, "hint", None) or None,
                details={**record, "cause": _cause(exc)},
            ) from exc
        _log.warning(
            "run %s: observer %s failed on %s: %s",
            self.run_id,
            record["observer"],
            record["event_type"],
            record["error"],
        )


def _cause(exc: Exception) -> str:
    """The cause in one line: its code (a typed error) or type, and its message."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    typed = isinstance(code, str) and code.startswith("LA-")
    head = f"[{code}]" if typed else type(exc).__name__ + ":"
    return f"{head} {message}"
