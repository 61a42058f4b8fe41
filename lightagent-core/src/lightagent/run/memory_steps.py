"""What memory retrieval and memory writes share: the phase question and the failure record.

Memory is never worth a crash: a failing backend or interceptor is recorded and the run
goes on without it.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from lightagent.errors import LightAgentError, StorageError
from lightagent.run.phases import ask
from lightagent.run.spec import RunSpec

__all__ = ["ask_memory", "backend_user", "memory_failed", "write_refused"]

_log = logging.getLogger("lightagent.run")


def memory_failed(spec: RunSpec, stage: str, exc: BaseException, code: str) -> None:
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


def backend_user(spec: RunSpec) -> str:
    """The user id the backend sees: the filter may scope it (a ``MemoryPolicy`` namespace
    and tenant); without a scope of its own, the run's tenant is put in (fail closed)."""
    from lightagent.memory.attribution import plain_user_id

    scope = getattr(spec.memory_filter, "backend_user_id", None)
    user_id = spec.ctx.user_id
    if callable(scope):
        return str(scope(user_id, context=spec.ctx))
    return plain_user_id(user_id, spec.ctx)
