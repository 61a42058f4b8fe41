"""``SubagentManager``: a tree of subagents with depth, count and concurrency limits.

Registering narrows permissions (``SecurityContext.child``, strictly: asking for more than
the parent holds is ``LA-PERMISSION-WIDEN``) and binds the narrowed context to the agent,
so its tool calls are checked against it. Runs over ``max_concurrency`` wait in line
(:class:`~lightagent_runtime.subagents.slots.RunSlots`) instead of being refused. Every step is a
``subagent.*`` event — in the parent's session log when the manager has one, and to
``event_sink`` — carrying the parent run's and trace's ids; a new manager on the same
session restores the records and the results of idempotent runs from the log alone.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lightagent.cancellation import CancellationToken
from lightagent.errors import BudgetError, ConfigurationError, ValidationError
from lightagent_control.context import PermissionSet, SecurityContext

from lightagent_runtime.subagents.permissions import bind_security, intersect
from lightagent_runtime.subagents.records import (
    SubagentRecord,
    SubagentResult,
    advance,
    fold_subagents,
)
from lightagent_runtime.subagents.slots import RunSlots, acquire_unless_cancelled, await_elsewhere

__all__ = ["SubagentManager"]

log = logging.getLogger("lightagent_runtime.subagents")

_AGENT_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@:+=-]{0,127}$")


def _limit(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(
            "LA-CONFIG",
            f"SubagentManager({name}={value!r}) must be an integer >= {minimum}",
            hint=f"Pass {name}= as a whole number of at least {minimum}.",
            details={"parameter": name},
        )
    return value


class SubagentManager:
    """Registers subagents under a root agent and runs them within limits.

    ``store``/``session_id`` (the parent's session store and session) make the records
    durable; ``root_context`` is what the root agent may do (unrestricted by default);
    ``event_sink(event)`` receives each event as ``{"type", "data"}`` (isolated: a sink
    that raises is logged, never fails the run).
    """

    def __init__(
        self,
        *,
        max_depth: int = 2,
        max_agents: int = 8,
        max_concurrency: int = 4,
        event_sink: Callable[[dict[str, Any]], Any] | None = None,
        store: Any = None,
        session_id: str | None = None,
        owner: Mapping[str, Any] | None = None,
        root_agent_id: str | None = None,
        root_context: SecurityContext | None = None,
    ) -> None:
        self.max_depth = _limit("max_depth", max_depth, 1)
        self.max_agents = _limit("max_agents", max_agents, 1)
        self.max_concurrency = _limit("max_concurrency", max_concurrency, 1)
        if (store is None) != (session_id is None):
            raise ConfigurationError(
                "LA-CONFIG",
                "SubagentManager needs both store= and session_id=, or neither",
                hint="Pass the parent's session store and session id to keep the records durable.",
            )
        if session_id is not None:
            from lightagent.events.store import validate_session_id

            validate_session_id(session_id)
        if root_context is not None and not isinstance(root_context, SecurityContext):
            raise ConfigurationError(
                "LA-CONFIG",
                f"root_context= must be a SecurityContext, got {type(root_context).__name__}",
            )
        self.event_sink = event_sink
        self.store = store
        self.session_id = session_id
        self.owner = dict(owner) if owner else None
        self.root_agent_id = root_agent_id
        # unrestricted by default, network included: a child may only lose what it has
        self.root_context = root_context or SecurityContext(
            agent_id=root_agent_id, network_allowed=True
        )
        self._lock = threading.RLock()  # a sink may read the manager back
        self._slots = RunSlots(self.max_concurrency)
        self._records: dict[str, SubagentRecord] = {}
        self._results: dict[str, SubagentResult] = {}
        self._agents: dict[str, Any] = {}
        self._contexts: dict[str, SecurityContext] = {}
        self._tokens: dict[str, set[CancellationToken]] = {}
        self._active: dict[str, int] = {}
        self._queued_from: dict[str, str] = {}
        self._inflight: dict[str, asyncio.Future[SubagentResult]] = {}
        if store is not None and session_id is not None:
            self._records, self._results = fold_subagents(store.events(session_id))

    # -- registration -----------------------------------------------------------------
    def register(
        self,
        agent: Any,
        *,
        agent_id: str | None = None,
        parent_agent_id: str | None = None,
        parent_permissions: PermissionSet | SecurityContext | None = None,
        allowed_capabilities: Iterable[str] | None = None,
        max_risk: Any = None,
        persistent: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> SubagentRecord:
        """Register ``agent`` (its id: ``agent_id`` or its ``name``) under ``parent_agent_id``.

        ``None`` (or the root's id) puts it directly under the root, at depth 1. Its
        permissions are the parent's, narrowed by ``allowed_capabilities`` and
        ``max_risk`` (and intersected with ``parent_permissions`` when given). Registering
        an id the log already holds, under the same parent, attaches the agent object to
        the restored record (how a new process takes its subagents back).
        """
        arun = getattr(agent, "arun", None)
        if not callable(arun):
            raise ConfigurationError(
                "LA-CONFIG",
                f"a subagent must have an async arun(query, **options), got {type(agent).__name__}",
                hint="Register a LightAgent (or an object with the same arun()).",
            )
        agent_id = agent_id or getattr(agent, "name", None)
        if not isinstance(agent_id, str) or not _AGENT_ID.fullmatch(agent_id):
            raise ValidationError(
                "LA-VALIDATION",
                f"invalid subagent id {agent_id!r}",
                hint="Use 1-128 characters from A-Z a-z 0-9 _ - . @ : + = (agent_id= or the agent's name).",
            )
        parent = None if parent_agent_id in (None, self.root_agent_id) else parent_agent_id
        with self._lock:
            existing = self._records.get(agent_id)
            if existing is not None:
                if existing.parent_agent_id != parent:
                    raise ValidationError(
                        "LA-SUBAGENT-EXISTS",
                        f"subagent {agent_id!r} is registered under {existing.parent_agent_id!r}, not {parent!r}",
                        hint="Give the agent another name (agent_id=), or register it under its parent.",
                    )
                context = self._context_of(existing)
                bind_security(agent, context)
                self._agents[agent_id] = agent
                return existing
            if parent is None:
                parent_context, depth = self.root_context, 1
            else:
                parent_record = self._records.get(parent)
                if parent_record is None:
                    raise ValidationError(
                        "LA-SUBAGENT-UNKNOWN",
                        f"no subagent {parent!r} to register {agent_id!r} under",
                        hint="Register the parent first, or leave parent_agent_id=None (the root).",
                    )
                parent_context, depth = self._context_of(parent_record), parent_record.depth + 1
            if depth > self.max_depth:
                raise BudgetError(
                    "LA-SUBAGENT-DEPTH",
                    f"subagent {agent_id!r} would be at depth {depth}, past max_depth={self.max_depth}",
                    hint="Register it under a shallower parent, or raise SubagentManager(max_depth=...).",
                    details={"depth": depth, "max_depth": self.max_depth},
                )
            open_count = sum(1 for r in self._records.values() if not r.closed)
            if open_count >= self.max_agents:
                raise BudgetError(
                    "LA-SUBAGENT-LIMIT",
                    f"{open_count} subagents are registered, max_agents={self.max_agents}",
                    hint="Cancel a subagent you no longer need, or raise SubagentManager(max_agents=...).",
                    details={"agents": open_count, "max_agents": self.max_agents},
                )
            if parent_permissions is not None:
                parent_context = intersect(parent_context, parent_permissions)
            # None keeps the parent's allow-list; strict: asking for more is an error
            context = parent_context.child(
                agent_id=agent_id,
                allowed_capabilities=allowed_capabilities,
                max_risk=max_risk,
                strict=True,
            )
            bind_security(agent, context)
            record = SubagentRecord(
                agent_id=agent_id,
                name=str(getattr(agent, "name", None) or agent_id),
                parent_agent_id=parent,
                depth=depth,
                permissions=context.permissions.to_dict(),
                persistent=bool(persistent),
                metadata=dict(metadata or {}),
            )
            # durable before it exists for anyone: a record is never lost after register returns
            self._emit(
                "subagent.created", {**record.to_dict(), "root_agent_id": self.root_agent_id}
            )
            self._records[agent_id] = record
            self._agents[agent_id] = agent
            self._contexts[agent_id] = context
            return record

    def _context_of(self, record: SubagentRecord) -> SecurityContext:
        context = self._contexts.get(record.agent_id)
        if context is None:  # restored from the log: rebuild it from what was recorded
            parent = (
                self.root_context
                if record.parent_agent_id is None
                else self._context_of(self._records[record.parent_agent_id])
            )
            recorded = PermissionSet.from_dict(record.permissions)
            context = intersect(parent, recorded).child(agent_id=record.agent_id)
            self._contexts[record.agent_id] = context
        return context

    # -- queries ----------------------------------------------------------------------
    def get(self, agent_id: str) -> SubagentRecord:
        """The record of ``agent_id`` (``LA-SUBAGENT-UNKNOWN`` when there is none)."""
        record = self._records.get(agent_id)
        if record is None:
            raise ValidationError(
                "LA-SUBAGENT-UNKNOWN",
                f"no subagent {agent_id!r}",
                hint="manager.list() names the registered subagents.",
            )
        return record

    def list(self, *, status: str | None = None) -> list[SubagentRecord]:
        """The records in registration order (only those with ``status`` when given)."""
        with self._lock:
            records = list(self._records.values())
        return [r for r in records if status is None or r.status == status]

    def tree(self) -> dict[str, Any]:
        """The root and its subagents, nested: ``{"agent_id", "children": [...]}``."""
        records = self.list()

        def node(agent_id: str | None, record: SubagentRecord | None) -> dict[str, Any]:
            children = [node(r.agent_id, r) for r in records if r.parent_agent_id == agent_id]
            out: dict[str, Any] = record.to_dict() if record is not None else {}
            out.setdefault("agent_id", self.root_agent_id)
            out["children"] = children
            return out

        return node(None, None)

    def context(self, agent_id: str) -> SecurityContext:
        """The narrowed ``SecurityContext`` the subagent's tool calls are checked against."""
        return self._context_of(self.get(agent_id))

    @property
    def running(self) -> int:
        """Subagent runs holding a concurrency slot now."""
        return self._slots.in_use

    @property
    def queued(self) -> int:
        """Subagent runs waiting for a slot."""
        return self._slots.waiting

    # -- running ----------------------------------------------------------------------
    async def run(
        self,
        agent_id: str,
        query: str,
        *,
        cancellation_token: CancellationToken | None = None,
        idempotency_key: str | None = None,
        parent_run_id: str | None = None,
        parent_trace_id: str | None = None,
        fork_through: int | bool | None = None,
        **options: Any,
    ) -> SubagentResult:
        """Run the subagent on ``query``; waits for a slot when ``max_concurrency`` are busy.

        With ``fork_through`` (a sequence of the parent's session, or True for its end) the
        subagent's own session starts as a fork of the parent's up to there: it sees the
        parent's history, keeps its narrowed permissions and writes to its own log (only
        its first run forks; later runs go on in that log).

        The run gets ``parent_trace_id`` (its trace links to the parent's) and a child of
        ``cancellation_token``. With ``idempotency_key``, a key the manager has a result
        for (in this process or in the log) returns that result without running again,
        and a key in flight waits for that run. Other keywords are run options.
        """
        record = self.get(agent_id)
        agent = self._agents.get(agent_id)
        if agent is None:
            raise ValidationError(
                "LA-SUBAGENT-UNKNOWN",
                f"subagent {agent_id!r} is in the log but its agent is not registered in this process",
                hint="Register the agent again (same name, same parent) to attach it.",
            )
        if not isinstance(query, str) or not query.strip():
            raise ValidationError(
                "LA-VALIDATION",
                "a subagent run needs a non-empty query",
                hint="Pass the task as text: await manager.run(agent_id, 'Summarize the logs').",
            )
        if fork_through is not None and fork_through is not False:
            await asyncio.to_thread(self._fork_for, agent_id, fork_through, parent_run_id)
        if idempotency_key is not None:
            owner_future: asyncio.Future[SubagentResult] | None = None
            with self._lock:
                done = self._results.get(idempotency_key)
                waiting = self._inflight.get(idempotency_key)
                if done is None and waiting is None:
                    owner_future = asyncio.get_running_loop().create_future()
                    self._inflight[idempotency_key] = owner_future
            if done is not None:
                return _replayed(done)
            if waiting is not None:
                return _replayed(await asyncio.shield(await_elsewhere(waiting)))
            try:
                result = await self._run(
                    record,
                    agent,
                    query,
                    cancellation_token,
                    idempotency_key,
                    parent_run_id,
                    parent_trace_id,
                    options,
                )
            except BaseException as exc:
                if owner_future is not None and not owner_future.done():
                    owner_future.set_exception(exc)
                    owner_future.exception()  # retrieved: no "never retrieved" warning
                raise
            finally:
                with self._lock:
                    self._inflight.pop(idempotency_key, None)
            if owner_future is not None and not owner_future.done():
                owner_future.set_result(result)
            return result
        return await self._run(
            record, agent, query, cancellation_token, None, parent_run_id, parent_trace_id, options
        )

    async def _run(
        self,
        record: SubagentRecord,
        agent: Any,
        query: str,
        parent_token: CancellationToken | None,
        key: str | None,
        parent_run_id: str | None,
        parent_trace_id: str | None,
        options: dict[str, Any],
    ) -> SubagentResult:
        agent_id = record.agent_id
        with self._lock:
            active = self._active.get(agent_id, 0)
            if record.closed or (not record.persistent and active):
                raise ValidationError(
                    "LA-SUBAGENT-CLOSED",
                    f"subagent {agent_id!r} is {record.status} and takes no further runs",
                    hint="Register a new subagent, or register it with persistent=True to run it again.",
                    details={"status": record.status, "persistent": record.persistent},
                )
            self._active[agent_id] = active + 1
            token = parent_token.child() if parent_token is not None else CancellationToken()
            self._tokens.setdefault(agent_id, set()).add(token)
        link = {
            "agent_id": agent_id,
            "parent_agent_id": record.parent_agent_id,
            "parent_run_id": parent_run_id,
            "parent_trace_id": parent_trace_id,
            "idempotency_key": key,
        }
        try:
            if not self._slots.try_acquire():
                await self._aemit("subagent.queued", {**link, "waiting": self._slots.waiting + 1})
                if not await acquire_unless_cancelled(self._slots, token):
                    await self._aemit(
                        "subagent.cancelled", {**link, "reason": token.reason, "queued_only": True}
                    )
                    return SubagentResult(
                        status="cancelled",
                        error={"code": "LA-CANCELLED", "message": f"cancelled: {token.reason}"},
                        **_result_link(link),
                    )
            try:
                await self._aemit("subagent.started", {**link, "query": query})
                run_options = dict(options)
                run_options.setdefault("run_group_id", parent_run_id)
                if self.session_id and getattr(agent, "session_binding", None) is not None:
                    # its own session beside the parent's: its inbox is reachable by send()
                    run_options.setdefault("session_id", self.subagent_session(agent_id))
                result = await agent.arun(
                    query,
                    result_format="object",
                    cancellation_token=token,
                    idempotency_key=key,
                    parent_trace_id=parent_trace_id,
                    **run_options,
                )
            finally:
                self._slots.release()
        finally:
            with self._lock:
                self._active[agent_id] -= 1
                self._tokens[agent_id].discard(token)
        error = getattr(result, "error", None)
        status = "completed"
        if error:
            status = "cancelled" if error.get("code") == "LA-CANCELLED" else "failed"
        outcome = SubagentResult(
            status=status,
            content=getattr(result, "content", None),
            error=error or None,
            run_id=getattr(result, "run_id", None),
            trace_id=getattr(result, "trace_id", None),
            **_result_link(link),
        )
        await self._aemit(
            f"subagent.{status}",
            {
                **link,
                **({"scope": "run"} if status == "cancelled" else {}),
                "run_id": outcome.run_id,
                "trace_id": outcome.trace_id,
                "content": outcome.content,
                "error": outcome.error,
            },
        )
        if key is not None:
            with self._lock:
                self._results[key] = outcome
        return outcome

    def run_sync(self, agent_id: str, query: str, **kwargs: Any) -> SubagentResult:
        """:meth:`run` from sync code (on the process's background loop)."""
        from lightagent.bridge import run_sync

        result: SubagentResult = run_sync(self.run(agent_id, query, **kwargs))
        return result

    def cancel(self, agent_id: str, reason: str = "cancelled") -> SubagentRecord:
        """Cancel the subagent: its running and queued runs stop, and it takes no new ones."""
        record = self.get(agent_id)
        with self._lock:
            tokens = list(self._tokens.get(agent_id, ()))
            if record.status == "cancelled":
                return record
        for token in tokens:
            token.cancel(reason)
        self._emit("subagent.cancelled", {"agent_id": agent_id, "reason": reason, "scope": "agent"})
        return record

    def send(
        self,
        agent_id: str,
        content: str,
        *,
        message_type: str = "followup",
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """Put ``content`` in the subagent's inbox: its session (``<session>:<agent_id>``).

        Its running run takes it in at its next step boundary. Needs a durable manager
        and a subagent with a session store.
        """
        self.get(agent_id)
        agent = self._agents.get(agent_id)
        sender = getattr(agent, "send_message", None)
        if self.session_id is None or sender is None:
            raise ConfigurationError(
                "LA-CONFIG",
                f"subagent {agent_id!r} has no inbox here",
                hint="Give the manager store=/session_id= and the subagent a session_store=.",
            )
        data: dict[str, Any] = sender(
            self.subagent_session(agent_id),
            content,
            message_type=message_type,
            message_id=message_id,
        )
        return data

    def _fork_for(self, agent_id: str, through: int | bool, parent_run_id: str | None) -> None:
        """Start the subagent's session as a fork of the parent's (once; blocking)."""
        child = self.subagent_session(agent_id)
        if self.store is None or child is None:
            raise ConfigurationError(
                "LA-CONFIG",
                "fork_through= needs a durable manager (a session store and the parent's session)",
                hint="Use agent.runtime.subagents, or SubagentManager(store=..., session_id=...).",
            )
        if self.store.last_sequence(child):
            return  # forked by an earlier run: the subagent goes on in its own log
        from lightagent.events.manager import SessionManager

        sequence = None if through is True else through
        SessionManager(self.store).fork(
            self.session_id or "", through_sequence=sequence, new_session_id=child
        )
        forked = self.store.last_sequence(child)
        self._emit(
            "subagent.forked",
            {
                "agent_id": agent_id,
                "session_id": child,
                "through_sequence": forked - 1,
                "parent_run_id": parent_run_id,
            },
        )

    def subagent_session(self, agent_id: str) -> str | None:
        """The session id the subagent's runs record into (None without a durable manager)."""
        return f"{self.session_id}:{agent_id}" if self.session_id else None

    # -- events -----------------------------------------------------------------------
    def _event(self, kind: str, data: dict[str, Any]) -> Any:
        from lightagent.events.model import SessionEvent

        data = {**data, "trace_type": kind.replace(".", "_")}
        return SessionEvent(
            kind,
            data=data,
            agent_id=data.get("agent_id"),
            run_id=data.get("parent_run_id"),
            turn_id=data.get("parent_run_id"),
            # a fact of the parent's trace; the child's own trace id is in the data
            trace_id=data.get("parent_trace_id"),
        )

    def _append(self, kind: str, data: dict[str, Any]) -> None:
        """Record one event in the parent's session log (blocking; nothing without a store)."""
        if self.store is not None and self.session_id is not None:
            from lightagent_runtime.inbox import append_owned

            append_owned(self.store, self.session_id, [self._event(kind, data)], self.owner)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        """Record one event (blocking: the sync entry points use it)."""
        self._append(kind, data)
        self._advance(kind, data)
        self._sink(kind, data)

    async def _aemit(self, kind: str, data: dict[str, Any]) -> None:
        if self.store is not None and self.session_id is not None:
            await asyncio.to_thread(self._append, kind, data)
        self._advance(kind, data)
        self._sink(kind, data)

    def _advance(self, kind: str, data: dict[str, Any]) -> None:
        """Move the live record as the fold would move it on reading this event."""
        with self._lock:
            record = self._records.get(str(data.get("agent_id")))
            if record is not None:
                advance(record, kind, data, self._queued_from)

    def _sink(self, kind: str, data: dict[str, Any]) -> None:
        if self.event_sink is None:
            return
        try:
            self.event_sink({"type": kind, "data": dict(data)})
        except Exception:  # an observer: logged, never fails the subagent's run
            log.exception("subagent event sink failed on %s", kind)


def _result_link(link: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "agent_id": link["agent_id"],
        "parent_run_id": link["parent_run_id"],
        "parent_trace_id": link["parent_trace_id"],
        "idempotency_key": link["idempotency_key"],
    }


def _replayed(result: SubagentResult) -> SubagentResult:
    from dataclasses import replace

    return replace(result, idempotent_replay=True)
