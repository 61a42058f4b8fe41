"""The loop's plain memory write: the turn's user message, after the run.

The write passes ``before_memory_write`` (a hook may rewrite or block it), then the
filter's :meth:`~lightagent.memory.filtering.MemoryFilter.admit_write`, and is recorded:
``memory_write`` or ``memory_write_block``. A write a hook relabels as internal (the
agent's own evidence) is refused here: making it a candidate for promotion is
lightagent-memory's (``pip install 'lightagent-core[memory]'``), whose write takes this
one over and reuses :func:`provenance`, :func:`before_write` and :func:`store`. Writes
carry the run's tenant, which a hook cannot relabel.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.memory.attribution import is_internal, run_tenant
from lightagent.run.effects import StoreMemory
from lightagent.run.memory_steps import ask_memory, backend_user, memory_failed, write_refused
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

__all__ = ["before_write", "provenance", "store", "write_turn"]


def provenance(spec: RunSpec, fields: dict[str, Any], memory_user_id: str) -> dict[str, Any]:
    """The metadata a write carries: ``fields`` (source, scope …) and the run's ids."""
    ctx = spec.ctx
    namespace = getattr(spec.memory_filter, "namespace", None)
    merged = {
        **fields,
        "agent_name": fields.get("agent_name") or ctx.agent_name,
        "trace_id": ctx.trace_id,
        "parent_trace_id": ctx.parent_trace_id,
        "run_id": ctx.run_id,
        "run_group_id": ctx.run_group_id,
        "session_id": ctx.session_id,
        "user_id": memory_user_id,
        "namespace": namespace,
        "tenant_id": run_tenant(ctx),
    }
    return {k: v for k, v in merged.items() if v is not None}


def write_turn(
    spec: RunSpec, st: RunState, data: Any, answer: str | None
) -> Generator[Any, Any, None]:
    """Write the user's message through the hooks and the filter."""
    ctx = spec.ctx
    target = backend_user(spec)
    metadata = provenance(spec, {"source": "user", "scope": "user"}, target)
    st.stage = "memory_write"
    asked = yield from before_write(spec, data, metadata, target, answer)
    if asked is None:
        return
    data, metadata = asked
    try:
        admission = spec.memory_filter.admit_write(data, user_id=ctx.user_id, context=ctx)
    except Exception as exc:  # a failing admission check refuses the write
        memory_failed(spec, "memory_write", exc, "LA-MEMORY")
        return
    if not admission.allowed:
        write_refused(ctx, "memory_policy", admission.reason, metadata)
        return
    if admission.value is not None:
        data = admission.value
    if is_internal(metadata) and getattr(
        spec.memory_filter, "require_promotion_for_internal_memory", True
    ):
        # the agent's own evidence waits for a promotion, which needs lightagent-memory
        write_refused(ctx, "memory_policy", "promotion_required", metadata)
        return
    yield from store(spec, data, target, metadata, None)


def before_write(
    spec: RunSpec, data: Any, metadata: dict[str, Any], target: str, answer: str | None
) -> Generator[Any, Any, tuple[Any, dict[str, Any]] | None]:
    """``before_memory_write``: ``(data, metadata)`` as the hooks leave them, or None when
    a hook blocked the write (recorded)."""
    ctx = spec.ctx
    if spec.interceptor is None:
        return data, metadata
    user_id = ctx.user_id
    out = yield from ask_memory(
        "before_memory_write",
        {"data": data, "user_id": user_id, "metadata": metadata, "answer": answer},
    )
    if out.action == "block":
        if ctx.active:
            ctx.emit(
                "memory_write_block",
                {"phase": "before_memory_write", "reason": out.reason, "user_id": user_id},
            )
        return None
    if out.action == "replace" and out.payload is not None:
        payload = out.payload
        if isinstance(payload, dict):
            data = payload.get("data", data)
            if isinstance(payload.get("metadata"), dict):
                # a hook may relabel provenance, never the owner or tenant it is written for
                pinned = {"user_id": target, "tenant_id": run_tenant(ctx)}
                relabelled = {**payload["metadata"], **pinned}
                metadata = {k: v for k, v in relabelled.items() if v is not None}
        else:
            data = payload
    return data, metadata


def store(
    spec: RunSpec,
    data: Any,
    target: str,
    metadata: dict[str, Any],
    candidate_id: str | None = None,
) -> Generator[Any, Any, Any]:
    """Store one admitted write (``memory_write``, then ``after_memory_write``); the
    backend's result, or None when it failed (recorded)."""
    ctx = spec.ctx
    try:
        result = yield StoreMemory(data, target, metadata)
    except Exception as exc:
        memory_failed(spec, "memory_write", exc, "LA-MEMORY")
        return None
    if ctx.active:
        event = {
            "user_id": ctx.user_id,
            "memory_id": result.get("memory_id") if isinstance(result, dict) else None,
            "chars": len(data) if isinstance(data, str) else None,
            "source": metadata.get("source"),
            "scope": metadata.get("scope"),
        }
        if candidate_id is not None:
            event["candidate_id"] = candidate_id
        ctx.emit("memory_write", event)
    if spec.interceptor is not None:
        yield from ask_memory(
            "after_memory_write", {"user_id": ctx.user_id, "metadata": metadata, "result": result}
        )
    return result
