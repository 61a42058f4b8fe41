"""The seeds' (LightAgent 0.11) agent methods and attributes that this project names differently.

Each is a thin view over what the agent already has (``tool_registry`` is ``agent.tools``),
so code written for 0.11 runs unchanged. ``docs/migration.md`` lists each with our name.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

__all__ = ["CompatMethods", "LogObserver", "compat_observers"]


class CompatMethods:
    """Mixed into :class:`~lightagent.agent.LightAgent`; needs ``tools`` and the session
    methods (``_latest``, ``_sessions``)."""

    tools: Any
    _last_messages: list[dict[str, Any]] | None = None

    # -- attributes -------------------------------------------------------------------
    @property
    def tool_registry(self) -> Any:
        """The seeds' name for :attr:`tools` (the agent's ``ToolRegistry``)."""
        return self.tools

    # -- tools ------------------------------------------------------------------------
    def get_tools(self) -> list[dict[str, Any]]:
        """The OpenAI tool schemas of the agent's tools."""
        return list(self.tools.get_tools())

    def get_tool(self, name: str) -> Any:
        """The tool registered as ``name`` (None when there is none)."""
        return self.tools.get_tool(name)

    def validate_tools(self) -> list[dict[str, str]]:
        """Diagnostics ``{tool, level, field, message}`` for the agent's tools."""
        return list(self.tools.validate_tools())

    # -- history ----------------------------------------------------------------------
    def get_history(self) -> list[dict[str, Any]]:
        """A copy of the messages of this agent's latest finished run (a stream's once consumed)."""
        return copy.deepcopy(self._last_messages or [])

    # -- session lifecycle ------------------------------------------------------------
    def pause_session(
        self,
        reason: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Pause the session (``session.paused``): its runs stop at their next step boundary."""
        return self._session_mark("session.paused", reason, session_id, user_id)

    def resume_session(
        self,
        reason: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Lift a pause (``session.resumed``): new runs of the session go ahead."""
        return self._session_mark("session.resumed", reason, session_id, user_id)

    def cancel_session(
        self,
        reason: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Cancel the session's running runs (``session.cancelled``) at their next step boundary."""
        return self._session_mark("session.cancelled", reason, session_id, user_id)

    def _session_mark(
        self, kind: str, reason: str | None, session_id: str | None, user_id: str | None
    ) -> Any:
        from lightagent.events.model import SessionEvent

        sid, user = self._latest(session_id, user_id)  # type: ignore[attr-defined]
        manager = self._sessions(user)  # type: ignore[attr-defined]
        manager.events(sid)  # the owner check, and LA-STORAGE-NOT-FOUND for no such session
        (event,) = manager.store.append(sid, [SessionEvent(kind, data={"reason": reason})])
        return event


class LogObserver:
    """Writes a run's trace events to the agent's logger (``log_file=`` / ``debug=``).

    Run start and end at INFO, blocks at WARNING, the rest at DEBUG (a failed run's one
    WARNING is the agent's own, :func:`lightagent.run.failure_log.log_failure`); the data is
    passed through :func:`lightagent.redact` and the file handler's redacting filter.
    """

    _WARN = ("hook_block", "guardrail_block", "exporter_error")

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        """Log one trace event."""
        kind = str(event.get("type"))
        if kind in ("run_start", "run_end"):
            level = logging.INFO
        elif kind in self._WARN or kind.endswith("_block"):
            level = logging.WARNING
        else:
            level = logging.DEBUG
        if not self.logger.isEnabledFor(level):
            return
        from lightagent.redaction import redact

        self.logger.log(level, "%s run=%s %s", kind, event.get("run_id"), redact(event.get("data")))


def compat_observers(
    tracetools: Any, logger: logging.Logger, log_file: str | None, debug: bool
) -> list[Any]:
    """Observers for the seeds' ``tracetools=`` (OpenTelemetry, via lightagent-otel) and
    ``log_file=`` / ``debug=`` (the agent's log)."""
    out: list[Any] = []
    if tracetools is not None:
        from lightagent.lazy import plugin_name

        observer = plugin_name("tracetools_observer", "tracetools=")(tracetools)
        if observer is not None:
            out.append(observer)
    if log_file or debug:
        out.append(LogObserver(logger))
    return out
