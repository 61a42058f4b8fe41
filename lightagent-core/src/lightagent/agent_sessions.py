"""The session and trace methods of ``LightAgent``: thin delegations to ``lightagent.events``.

Unlike the seeds, every session method names its ``session_id``: one agent serves many
sessions at once and keeps no "current session". Each acts for a caller — ``user_id``
(``"default_user"``, as in ``run()``) and the agent's tenant and project — and refuses a
session of anyone else with ``LA-SESSION-OWNER``.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from lightagent.errors import ConfigurationError

__all__ = ["SessionMethods"]


class SessionMethods:
    """Mixed into :class:`~lightagent.agent.LightAgent`; needs ``session_binding`` and ``export_trace``."""

    session_binding: Any

    def export_trace(self) -> list[dict[str, Any]]:  # pragma: no cover - LightAgent defines it
        raise NotImplementedError

    def _latest(self, session_id: str | None, user_id: str | None) -> tuple[str, str]:
        """``session_id``, or the session of this agent's latest run (the seeds' form)."""
        last = getattr(self, "_last_session", None)
        if session_id is None:
            if last is None or last[0] is None:
                raise ConfigurationError(
                    "LA-CONFIG",
                    "no session_id= given and this agent has not run in a session yet",
                    hint="Pass session_id=, or run the agent with session_id= first.",
                )
            session_id = last[0]
            user_id = user_id or last[1]
        return session_id, user_id or "default_user"

    def _sessions(self, user_id: str) -> Any:
        from lightagent.events.manager import SessionManager
        from lightagent.events.ownership import owner_of

        binding = self.session_binding
        if binding is None:
            raise ConfigurationError(
                "LA-CONFIG",
                "this agent has no session store",
                hint='Pass session_store= (e.g. SqliteSessionStore("sessions.sqlite3") or "sqlite").',
            )
        # Scoped to the caller: the user and the agent's tenant/project, as a run records them.
        return SessionManager(binding.store, owner=owner_of(self, user_id))

    def get_session(self, session_id: str, *, user_id: str = "default_user") -> list[Any]:
        """Every event of a session of ``user_id`` (``LA-SESSION-OWNER`` for anyone else's)."""
        return self._sessions(user_id).events(session_id)

    def replay_session(self, session_id: str, *, user_id: str = "default_user") -> Any:
        """A ``SessionReplay``: event and turn counts, incomplete and failed turns, last event."""
        return self._sessions(user_id).replay(session_id)

    def checkpoint_session(
        self,
        label: str,
        *,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Mark the session's current sequence with ``label``; returns a ``SessionCheckpoint``.

        Without ``session_id=``, the session of this agent's latest run (as in the seeds;
        with concurrent runs, name it)."""
        session_id, user = self._latest(session_id, user_id)
        return self._sessions(user).checkpoint(session_id, label, metadata=metadata)

    def fork_session(
        self,
        *,
        session_id: str | None = None,
        through_sequence: int | None = None,
        new_session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Copy the session's events up to ``through_sequence`` into a new session (lineage kept).

        Without ``session_id=``, the session of this agent's latest run (as in the seeds)."""
        session_id, user = self._latest(session_id, user_id)
        return self._sessions(user).fork(
            session_id,
            through_sequence=through_sequence,
            new_session_id=new_session_id,
            metadata=metadata,
        )

    def export_session(
        self, session_id: str, destination: str | Path | IO[str], *, user_id: str = "default_user"
    ) -> int:
        """Write the session's events as JSON lines; returns how many."""
        return self._sessions(user_id).export(session_id, destination)

    def compact_session(
        self,
        *,
        session_id: str,
        max_messages: int = 20,
        summarizer: Any = None,
        user_id: str = "default_user",
    ) -> Any:
        """Record a compaction of the session's history (the log itself is never rewritten)."""
        return self._sessions(user_id).compact(
            session_id, max_messages=max_messages, summarizer=summarizer
        )

    def summarize_trace(self, *, pricing: dict[str, float] | None = None) -> Any:
        """A ``TraceSummary`` of the last traced run."""
        from lightagent.events.trace import summarize_trace

        return summarize_trace(self.export_trace(), pricing=pricing)

    def export_trace_to(
        self,
        exporter: Any,
        *,
        pricing: dict[str, float] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Any:
        """Send the last traced run to ``exporter`` (an object or a registered name); isolated."""
        from lightagent.events.trace import export_trace

        return export_trace(self.export_trace(), exporter, pricing=pricing, metadata=metadata)
