"""Retrieving memories as a step of the loop, and what retrieval and writes share: the
phase question, the failure record, the backend's user id.

Every step is recorded in the run's events (``memory_read``, ``memory_retrieve_filter``,
``memory_retrieve_block``; failures as ``error`` with stage ``memory_retrieve`` /
``memory_write``). A failing backend, filter or interceptor never fails the run: the
answer goes on without memories, and the failure is on record. Memory events carry
counts and ids, never the remembered text.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Generator, Mapping
from typing import Any

from lightagent.errors import LightAgentError, StorageError
from lightagent.memory.protocol import memory_items
from lightagent.run.effects import RetrieveMemory
from lightagent.run.phases import ask, payload_value
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

__all__ = [
    "MEMORY_HEADER",
    "ask_memory",
    "backend_user",
    "memory_failed",
    "recall",
    "write_refused",
]

_log = logging.getLogger("lightagent.run")

MEMORY_HEADER = "Relevant memories about the user (from earlier conversations):"


def memory_failed(spec: RunSpec, stage: str, exc: BaseException, code: str) -> None:
    """Record a failed memory step (an ``error`` event) and go on without it."""
    error = (
        exc
        if isinstance(exc, LightAgentError)
        else StorageError(
            code, f"{type(exc).__name__}: {exc}", details={"exception": type(exc).__name__}
        )
    )
    ctx = spec.ctx
    if ctx.active:
        ctx.emit("error", {"stage": stage, "error": error.to_dict()})
    _log.warning("run %s: %s failed, going on without it: %s", ctx.run_id, stage, error)


def write_refused(ctx: Any, phase: str, reason: Any, about: Any) -> None:
    """Record a write the policy refused (``memory_write_block``); ``about`` is the write's
    metadata or its ``MemoryCandidate``."""
    if not ctx.active:
        return
    if isinstance(about, dict):
        source, scope, candidate_id = about.get("source"), about.get("scope"), None
    else:
        source, scope, candidate_id = about.source, about.scope, about.candidate_id
    event = {
        "phase": phase,
        "reason": reason,
        "user_id": ctx.user_id,
        "source": source,
        "scope": scope,
    }
    if candidate_id is not None:
        event["candidate_id"] = candidate_id
    ctx.emit("memory_write_block", event)


def ask_memory(phase: str, payload: dict[str, Any]) -> Generator[Any, Any, Any]:
    """``ask`` where an interceptor failure counts as a block (memory is never worth a crash)."""
    try:
        return (yield from ask(phase, payload))
    except LightAgentError as exc:
        from lightagent.interceptors import PhaseOutcome

        return PhaseOutcome("block", None, exc.message, {"code": exc.code})


def backend_user(spec: RunSpec, policy: Any) -> str:
    """The user id the backend sees: the policy may scope it (a ``MemoryPolicy`` namespace
    and tenant); without a scope of its own, the run's tenant is put in (fail closed)."""
    from lightagent_memory.attribution import plain_user_id

    scope = getattr(policy, "backend_user_id", None)
    user_id = spec.ctx.user_id
    if callable(scope):
        return str(scope(user_id, context=spec.ctx))
    return plain_user_id(user_id, spec.ctx)


def _user_target(spec: RunSpec, run: Any) -> str:
    return backend_user(spec, run.policy)


def recall(
    spec: RunSpec,
    run: Any,
    st: RunState,
    query: str,
    *,
    scope: str = "user",
    target: Callable[[RunSpec, Any], str] = _user_target,
    results_filter: Callable[[list[dict[str, Any]]], Any] | None = None,
    seen: Callable[[RunSpec, list[dict[str, Any]], str], None] | None = None,
) -> Generator[Any, Any, list[dict[str, Any]]]:
    """One retrieval for ``run`` (a :class:`~lightagent_memory.remember.MemoryRun`) through
    its phases and the filter: the user's (``scope="user"``, through ``run.policy``), or another the caller names with the backend id
    ``target(spec, run)`` and its ``results_filter(items)``. ``seen(spec, allowed,
    backend_id)`` is told what passed, before it is recorded."""
    ctx = spec.ctx
    active = ctx.active
    interceptor = spec.interceptor
    user_id = ctx.user_id
    st.stage = "memory_retrieve"
    if interceptor is not None:
        out = yield from ask_memory(
            "before_memory_retrieve", {"query": query, "user_id": user_id, "scope": scope}
        )
        if out.action == "block":
            if active:
                ctx.emit(
                    "memory_retrieve_block",
                    {"phase": "before_memory_retrieve", "reason": out.reason, "user_id": user_id},
                )
            return []
        if out.action == "replace" and out.payload is not None:
            new_query = payload_value(out.payload, "query")
            if isinstance(new_query, str):
                query = new_query
    started = time.perf_counter()
    try:
        backend_id = target(spec, run)
        raw = yield RetrieveMemory(query, backend_id, run.memory)
        items = memory_items(raw)
    except Exception as exc:
        memory_failed(spec, "memory_retrieve", exc, "LA-MEMORY")
        return []
    try:
        # The filter point (MemoryPolicy): nothing reaches the prompt without passing it.
        if results_filter is None:
            outcome = run.policy.filter_results(items, user_id=user_id, context=ctx)
        else:
            outcome = results_filter(items)
        blocked = list(outcome.blocked)
        # whatever the filter: a record still waiting for promotion is no memory yet
        allowed = [m for m in outcome.allowed if not _unpromoted(m)]
        blocked += [{"reason": "unpromoted"}] * (len(outcome.allowed) - len(allowed))
    except Exception as exc:  # a failing filter lets nothing through
        memory_failed(spec, "memory_retrieve", exc, "LA-MEMORY")
        return []
    if blocked and active:
        reasons = Counter(str(b.get("reason", "blocked")) for b in blocked)
        ctx.emit(
            "memory_retrieve_filter",
            {
                "total_count": len(items),
                "allowed_count": len(allowed),
                "blocked_count": len(blocked),
                "reasons": dict(reasons),
                "user_id": user_id,
                "scope": scope,
            },
        )
    if interceptor is not None:
        asked = {"query": query, "user_id": user_id, "scope": scope}
        # the seeds' hooks edit ``memories``; ``results`` is the same list
        out = yield from ask_memory(
            "after_memory_retrieve", {**asked, "memories": allowed, "results": allowed}
        )
        if out.action == "block":
            if active:
                ctx.emit(
                    "memory_retrieve_block",
                    {"phase": "after_memory_retrieve", "reason": out.reason, "user_id": user_id},
                )
            return []
        if out.action == "replace" and out.payload is not None:
            try:
                found = payload_value(out.payload, "memories")
                if found is None or found is allowed:  # a hook that replaced ``results`` only
                    found = payload_value(out.payload, "results")
                allowed = memory_items({"results": found})
            except LightAgentError as exc:
                memory_failed(spec, "memory_retrieve", exc, "LA-MEMORY")
                return []
    if seen is not None:
        seen(spec, allowed, backend_id)
    if active:
        ctx.emit(
            "memory_read",
            {
                "user_id": user_id,
                "scope": scope,
                "count": len(allowed),
                "memory_ids": [m.get("memory_id") or m.get("id") for m in allowed],
                "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            },
        )
    return allowed


def _unpromoted(item: Any) -> bool:
    """Whether a result says it is a candidate (any ``promotion_status`` but ``promoted``)."""
    metadata = item.get("metadata") if isinstance(item, Mapping) else None
    status = metadata.get("promotion_status") if isinstance(metadata, Mapping) else None
    return status is not None and status != "promoted"
