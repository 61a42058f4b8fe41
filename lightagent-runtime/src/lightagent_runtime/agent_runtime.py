"""``agent.runtime`` (:class:`AgentRuntime`), the seeds' facade over a session's
long-task state.
"""

from __future__ import annotations

from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["AgentRuntime"]


class AgentRuntime:
    """``agent.runtime``: one session's long-task state, read from and written to its log.

    ``goals``, ``inbox``, ``budget``, ``progress`` and ``subagents`` are views over the
    agent's session store (nothing is held in memory that the log does not hold);
    ``pause``/``resume``/``cancel`` are events the session's running runs obey at their
    next step boundary. The session is the one given to :meth:`open_session` /
    :meth:`for_session`, else the session of the agent's latest run.

    Built on its own, as the seeds allow (``AgentRuntime(session_store=...,
    budget_limits=...)``), it holds a model-less agent of its own over that store: the
    views, control events and snapshot work; runs need a real agent's ``agent.runtime``.
    """

    def __init__(
        self,
        agent: Any = None,
        *,
        session_id: str | None = None,
        user_id: str = "default_user",
        session_store: Any = None,
        budget_limits: Any = None,
        capability_registry: Any = None,
        runtime_id: str | None = None,
    ) -> None:
        if agent is None:
            agent = _headless_agent(session_store, budget_limits, runtime_id)
        self.agent = agent
        self.user_id = user_id
        self._session_id = session_id
        #: The seeds' ``runtime.registry`` (what the runtime was given; not consulted here).
        self.registry = capability_registry
        self.runtime_id = runtime_id or getattr(agent, "name", None)

    # -- the session --------------------------------------------------------------------
    @property
    def session_store(self) -> Any:
        """The agent's session store (``LA-CONFIG`` when it has none)."""
        self.agent._sessions(self.user_id)  # the typed error without a store
        return self.agent.session_binding.store

    @property
    def session_id(self) -> str:
        """The session this runtime acts on."""
        if self._session_id is not None:
            return self._session_id
        session_id, _ = self.agent._latest(None, self.user_id)
        return session_id

    def open_session(
        self, session_id: str | None = None, *, user_id: str | None = None
    ) -> AgentRuntime:
        """Act on ``session_id`` from now on (a new id when None); returns this runtime.

        The seeds' form. With one agent serving several sessions at once, prefer
        :meth:`for_session`, which leaves this runtime as it is.
        """
        import uuid

        from lightagent.events.store import validate_session_id

        self._session_id = validate_session_id(session_id or f"session_{uuid.uuid4().hex}")
        self.user_id = user_id or self.user_id
        return self

    @property
    def session(self) -> Any:
        """The seeds' ``runtime.session``: the store's view of the session (``store.get``)."""
        getter = getattr(self.session_store, "get", None)
        return getter(self.session_id) if callable(getter) else None

    def for_session(self, session_id: str, *, user_id: str | None = None) -> AgentRuntime:
        """A runtime of the same agent acting on ``session_id``."""
        from lightagent.events.store import validate_session_id

        return AgentRuntime(
            self.agent,
            session_id=validate_session_id(session_id),
            user_id=user_id or self.user_id,
        )

    def _owner(self) -> dict[str, Any]:
        from lightagent.events.ownership import owner_of

        return owner_of(self.agent, self.user_id)

    def _events(self) -> list[Any]:
        # through the SessionManager: a session of another user is LA-SESSION-OWNER
        events: list[Any] = self.agent._sessions(self.user_id).events(self.session_id)
        return events

    def _view_args(self) -> tuple[Any, str, dict[str, Any], Any]:
        return self.session_store, self.session_id, self._owner(), self._events

    # -- the views ----------------------------------------------------------------------
    @property
    def goals(self) -> Any:
        """The session's goals (a ``GoalsView``)."""
        from lightagent_runtime.views import GoalsView

        return GoalsView(*self._view_args(), self.agent.goal_checks)

    @property
    def inbox(self) -> Any:
        """The session's inbox (an ``InboxView``)."""
        from lightagent_runtime.views import InboxView

        return InboxView(*self._view_args())

    @property
    def budget(self) -> Any:
        """The session's budget ledger (a ``BudgetView``) under the agent's limits."""
        from lightagent_runtime.views import BudgetView

        return BudgetView(*self._view_args(), self.agent.extension_part("budgets"))

    @property
    def progress(self) -> Any:
        """The agent's progress policy and the session's stalls (a ``ProgressView``)."""
        from lightagent_runtime.views import ProgressView

        return ProgressView(*self._view_args(), self.agent.progress_policy)

    def _managers(self) -> dict[str, Any]:
        managers: dict[str, Any] = self.agent.__dict__.setdefault("_subagent_managers", {})
        return managers

    @property
    def subagents(self) -> Any:
        """The session's ``SubagentManager`` (default limits; assign one to choose them).

        One per agent and session, whichever runtime asks (so its concurrency limit is
        shared). Its records live in this session's log, under this agent as the root, with
        the agent's security context (if any) as the root's permissions.
        """
        session_id = self.session_id
        with self.agent._lock:
            manager = self._managers().get(session_id)
        if manager is not None:
            return manager
        from lightagent_runtime.subagents import SubagentManager

        # built outside the agent's lock: reading the store may take that lock itself
        made = SubagentManager(
            store=self.session_store,
            session_id=session_id,
            owner=self._owner(),
            root_agent_id=self.agent.name,
            root_context=getattr(self.agent.interceptor, "security_context", None),
        )
        with self.agent._lock:  # first one in wins: every caller shares one manager
            return self._managers().setdefault(session_id, made)

    @subagents.setter
    def subagents(self, manager: Any) -> None:
        from lightagent_runtime.subagents import SubagentManager

        if not isinstance(manager, SubagentManager):
            raise ConfigurationError(
                "LA-CONFIG",
                f"runtime.subagents must be a SubagentManager, got {type(manager).__name__}",
            )
        with self.agent._lock:
            self._managers()[self.session_id] = manager

    @property
    def jobs(self) -> Any:
        """The session's background jobs: ``agent.job_manager(session_id)`` (a ``JobManager``)."""
        return self.agent.job_manager(self.session_id, user_id=self.user_id)

    # -- control ------------------------------------------------------------------------
    def _record(self, kind: str, reason: str | None) -> dict[str, Any]:
        from lightagent.events.model import SessionEvent

        from lightagent_runtime.inbox import append_owned

        data = {"reason": reason}
        append_owned(
            self.session_store, self.session_id, [SessionEvent(kind, data=data)], self._owner()
        )
        return data

    def pause(self, reason: str = "paused") -> dict[str, Any]:
        """Pause the session: its running runs stop at their next step boundary (before a
        model request, never between a tool call and its result), and new runs stop before
        their first request, until :meth:`resume`. A ``runtime.paused`` event."""
        return self._record("runtime.paused", reason)

    def resume(self, reason: str | None = None) -> dict[str, Any]:
        """Lift a pause (``runtime.resumed``); the next run of the session goes ahead."""
        return self._record("runtime.resumed", reason)

    def cancel(self, reason: str = "cancelled") -> dict[str, Any]:
        """Cancel the session's running runs at their next step boundary (``runtime.cancelled``).

        Runs started afterwards are not affected (unlike :meth:`pause`).
        """
        return self._record("runtime.cancelled", reason)

    @property
    def paused(self) -> str | None:
        """The reason of the session's standing pause, or None."""
        from lightagent_runtime.inbox_steps import InboxScan

        scan = InboxScan()
        scan.feed(self._events())
        return scan.paused

    def continue_run(
        self, query: str | None = None, *, reason: str | None = None, **options: Any
    ) -> Any:
        """Lift a pause, then go on: resume the session's interrupted run if it has one
        (nothing it already did is repeated), else run ``query`` in the session.

        With neither an interrupted run nor a query it is ``LA-VALIDATION``.
        """
        from lightagent.events.manager import SessionManager

        if self.paused is not None:
            self.resume(reason)
        replay = SessionManager(self.session_store).replay(self.session_id)
        if replay.incomplete_runs:
            return self.agent.resume(
                replay.incomplete_runs[-1], session_id=self.session_id, **options
            )
        if query is None:
            from lightagent.errors import ValidationError

            raise ValidationError(
                "LA-VALIDATION",
                f"session {self.session_id!r} has no interrupted run to continue",
                hint="Pass the next query: agent.runtime.continue_run('Go on').",
            )
        return self.agent.run(query, session_id=self.session_id, user_id=self.user_id, **options)

    def checkpoint(self, label: str, *, metadata: dict[str, Any] | None = None) -> Any:
        """Mark the session's current sequence (a ``SessionCheckpoint``)."""
        return self.agent.checkpoint_session(
            label, session_id=self.session_id, metadata=metadata, user_id=self.user_id
        )

    def fork(
        self, *, new_session_id: str | None = None, through_sequence: int | None = None
    ) -> Any:
        """Copy the session into a new one (lineage kept); returns the new session's info."""
        return self.agent.fork_session(
            session_id=self.session_id,
            new_session_id=new_session_id,
            through_sequence=through_sequence,
            user_id=self.user_id,
        )

    def snapshot(self) -> dict[str, Any]:
        """Everything the log says about the session's long-task state, from one read."""
        from lightagent_runtime.budgets import session_spent
        from lightagent_runtime.goal_steps import all_goals
        from lightagent_runtime.inbox import fold_inbox
        from lightagent_runtime.inbox_steps import InboxScan
        from lightagent_runtime.subagents.records import fold_subagents

        events = self._events()
        scan = InboxScan()
        scan.feed(events)
        messages = list(fold_inbox(events).values())
        records, _ = fold_subagents(events)
        return {
            "session_id": self.session_id,
            "last_sequence": events[-1].sequence if events else 0,
            "paused": scan.paused,
            "goals": list(all_goals(events).values()),
            "inbox": {
                status: [m for m in messages if m["status"] == status]
                for status in ("pending", "claimed", "completed", "rejected")
            },
            "budget": {"used": session_spent(events)},
            "progress": {
                "stalls": [
                    {**e.data, "run_id": e.run_id} for e in events if e.type == "progress.stalled"
                ]
            },
            "subagents": [r.to_dict() for r in records.values()],
        }


def _headless_agent(session_store: Any, budget_limits: Any, runtime_id: str | None) -> Any:
    """The agent a standalone runtime acts through: no model, the given store and limits."""
    if session_store is None:
        raise ConfigurationError(
            "LA-CONFIG",
            "AgentRuntime() needs an agent or session_store=",
            hint="AgentRuntime(session_store=SqliteSessionStore('s.sqlite3')), or use agent.runtime.",
        )
    from lightagent import LightAgent

    options: dict[str, Any] = {"session_store": session_store}
    if budget_limits is not None:
        options["budget_limits"] = budget_limits
    return LightAgent(name=runtime_id or "runtime", **options)
