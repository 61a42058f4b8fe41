"""Memory writes as a step of the loop, after the run: the turn's user message, and the
agent's reflection.

Each write passes ``before_memory_write`` (a hook may rewrite or block it), then the
policy's admission (length, credentials, patterns, duplicates, the per-run limit, the
callback), and is recorded: ``memory_write`` or ``memory_write_block``. A write whose
source or scope is internal (the learning note of ``self_learning=True``, or a hook that
marks it so) is not stored: it becomes a :class:`~lightagent.memory.MemoryCandidate`,
decided on the spot by ``before_memory_promote`` hooks and the policy's promotion
callback; without a final decision it waits (``memory_promotion_required``) for
``agent.promote_memory_candidate``. The text a promotion would store passes the same
admission first (:func:`~lightagent_memory.candidates.admit_promotion`); refused, the
candidate waits. Writes carry the run's tenant, which a hook cannot relabel.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.errors import LightAgentError
from lightagent.run.effects import StoreMemory
from lightagent.run.phases import payload_value
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

from lightagent_memory.candidates import (
    DECISION_EVENTS,
    CandidateBook,
    MemoryCandidate,
    MemoryPromotionDecision,
    admit_promotion,
    coerce_decision,
    hook_blocked,
)
from lightagent_memory.learning import learning_note, learning_scope
from lightagent_memory.recall import ask_memory, backend_user, memory_failed, write_refused
from lightagent_memory.scope import MemoryScope, agent_memory_user_id, is_internal, run_tenant

__all__ = [
    "MemoryRun",
    "agent_target",
    "before_write",
    "policy_context",
    "provenance",
    "store",
    "write_turn",
]


class MemoryRun:
    """One run's memory: its backend and policy, what it has written and seen (for the
    per-run limit and duplicate checks), the agent's ``CandidateBook`` and whether it
    learns (``self_learning=True``)."""

    __slots__ = ("book", "fingerprints", "memory", "policy", "self_learning", "writes")

    def __init__(
        self,
        memory: Any,
        policy: Any,
        book: CandidateBook | None = None,
        self_learning: bool = False,
    ) -> None:
        #: The ``MemoryProtocol`` backend.
        self.memory = memory
        #: What retrieved memories and writes pass (a ``MemoryPolicy`` or another ``MemoryFilter``).
        self.policy = policy
        self.writes = 0
        self.fingerprints: set[str] = set()
        self.book = book
        self.self_learning = self_learning


def agent_target(spec: RunSpec, run: MemoryRun) -> str:
    """The backend id of the agent's own (self-learning) memory, in the run's tenant."""
    own = getattr(run.policy, "agent_user_id", None)
    name, tenant = spec.ctx.agent_name, run_tenant(spec.ctx)
    return (
        str(own(name, tenant=tenant)) if callable(own) else agent_memory_user_id(name, None, tenant)
    )


def policy_context(spec: RunSpec, memory_user_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The ``ctx`` a policy callback receives."""
    ctx = spec.ctx
    return {
        "user_id": ctx.user_id,
        "memory_user_id": memory_user_id,
        "agent_name": ctx.agent_name,
        "trace_id": ctx.trace_id,
        "parent_trace_id": ctx.parent_trace_id,
        "run_id": ctx.run_id,
        "run_group_id": ctx.run_group_id,
        "session_id": ctx.session_id,
        "tenant_id": ctx.tenant_id,
        "source": metadata.get("source"),
        "scope": metadata.get("scope"),
        "metadata": dict(metadata),
    }


def write_turn(
    spec: RunSpec, st: RunState, run: MemoryRun, data: Any, answer: str | None
) -> Generator[Any, Any, None]:
    """Write the user's message; with ``self_learning``, propose the turn as a reflection."""
    user_target = backend_user(spec, run.policy)
    metadata = provenance(spec, run, MemoryScope.user().to_metadata(), user_target)
    yield from _write(spec, st, run, data, metadata, user_target, answer)
    if run.self_learning:
        note = learning_note(
            data if isinstance(data, str) else None,
            answer,
            st.executed,
            getattr(st, "thought", None),
        )
        if note is not None:
            own = agent_target(spec, run)
            scope = MemoryScope(**learning_scope(spec.ctx.agent_name))
            metadata = provenance(spec, run, scope.to_metadata(), own)
            yield from _write(spec, st, run, note, metadata, own, None)


def _admit(spec: RunSpec, run: MemoryRun, data: Any, target: str, metadata: dict[str, Any]) -> Any:
    policy = run.policy
    allows = getattr(policy, "allows_write", None)
    if not callable(allows):
        return policy.admit_write(data, user_id=spec.ctx.user_id, context=spec.ctx), None
    pctx = policy_context(spec, target, metadata)
    recent = set(run.fingerprints)
    book = run.book
    fingerprint = None
    fingerprint_of = getattr(policy, "write_fingerprint", None)
    if callable(fingerprint_of):
        fingerprint = fingerprint_of(data, pctx)
        if book is not None and book.seen(fingerprint):
            recent.add(fingerprint)
    decision = allows(data, pctx, write_count=run.writes, recent_fingerprints=recent)
    return decision, fingerprint


def _write(
    spec: RunSpec,
    st: RunState,
    run: MemoryRun,
    data: Any,
    metadata: dict[str, Any],
    target: str,
    answer: str | None,
) -> Generator[Any, Any, None]:
    ctx = spec.ctx
    active = ctx.active
    st.stage = "memory_write"
    asked = yield from before_write(spec, data, metadata, target, answer)
    if asked is None:
        return
    data, metadata = asked
    try:
        admission, fingerprint = _admit(spec, run, data, target, metadata)
    except Exception as exc:  # a failing admission check refuses the write
        memory_failed(spec, "memory_write", exc, "LA-MEMORY")
        return
    if getattr(run.policy, "memory_write_admission", None) is not None and active:
        ctx.emit(
            "hook_decision",
            {
                "phase": "before_memory_write",
                "hook": "memory_write_admission",
                "adapter": "memory_policy",
                "action": "continue" if admission.allowed else "block",
                "reason": admission.reason,
            },
        )
    if not admission.allowed:
        write_refused(ctx, "memory_policy", admission.reason, metadata)
        return
    if admission.value is not None:
        data = admission.value
    run.writes += 1
    if fingerprint is not None:
        run.fingerprints.add(fingerprint)
        if run.book is not None:
            run.book.remember(fingerprint)
    if is_internal(metadata) and getattr(run.policy, "require_promotion_for_internal_memory", True):
        yield from _propose(spec, st, run, data, metadata, target)
        return
    yield from store(spec, run, data, target, metadata, None)


def _propose(
    spec: RunSpec, st: RunState, run: MemoryRun, data: Any, metadata: dict[str, Any], target: str
) -> Generator[Any, Any, None]:
    """Make the internal write a candidate and let the hooks and the policy decide it now."""
    ctx = spec.ctx
    known = {
        "source",
        "scope",
        "agent_name",
        "trace_id",
        "parent_trace_id",
        "run_id",
        "user_id",
        "tenant_id",
    }
    candidate = MemoryCandidate(
        data=data,
        memory_user_id=target,
        original_user_id=ctx.user_id,
        source=str(metadata.get("source", "reflection")),
        scope=str(metadata.get("scope", "agent")),
        agent_name=metadata.get("agent_name", ctx.agent_name),
        trace_id=ctx.trace_id,
        parent_trace_id=ctx.parent_trace_id,
        run_id=ctx.run_id,
        run_group_id=ctx.run_group_id,
        confidence=metadata.get("confidence"),
        trust_level=metadata.get("trust_level"),
        metadata={k: v for k, v in metadata.items() if k not in known},
        session_id=ctx.session_id,
        tenant_id=run_tenant(ctx),
    )
    st.stage = "memory_promote"
    decision, blocked = yield from _decide(spec, run.policy, candidate)
    if decision.final:
        candidate.status = "promoted" if decision.promotes else "rejected"
        candidate.injectable = decision.promotes
    if run.book is not None:
        run.book.add(candidate)
    if ctx.active:
        if decision.final:
            ctx.emit(
                DECISION_EVENTS[decision.action],
                {
                    "candidate_id": candidate.candidate_id,
                    "decided_by": decision.metadata.get("decided_by", "policy"),
                    "reason": decision.reason,
                    "candidate": candidate.to_dict(),
                },
            )
        else:
            ctx.emit(
                "memory_promotion_required",
                {"candidate_id": candidate.candidate_id, "candidate": candidate.to_dict()},
            )
            if blocked is not None:
                ctx.emit(
                    "memory_promotion_blocked",
                    {"candidate_id": candidate.candidate_id, "reason": blocked},
                )
    result = None
    if decision.promotes:
        text = decision.value if decision.action == "rewrite" else candidate.data
        result = yield from store(
            spec, run, text, target, candidate.write_metadata(decision), candidate.candidate_id
        )
    if spec.interceptor is not None:
        yield from ask_memory(
            "after_memory_promote",
            {
                "candidate": candidate.to_dict(),
                "decision": decision.to_dict(),
                "result": result,
            },
        )


def _decide(
    spec: RunSpec, policy: Any, candidate: MemoryCandidate
) -> Generator[Any, Any, tuple[MemoryPromotionDecision, str | None]]:
    """(decision, why promotion was blocked or None): hooks first, then the policy."""
    decision: MemoryPromotionDecision | None = None
    if spec.interceptor is not None:
        out = yield from ask_memory(
            "before_memory_promote", {"candidate": candidate.to_dict(), "decision": None}
        )
        if out.action == "block":
            hook_blocked(spec.ctx, out.reason or "blocked by a hook", out)
            return MemoryPromotionDecision.keep(out.reason), out.reason or "blocked by a hook"
        if out.action == "replace" and out.payload is not None:
            try:
                decision = coerce_decision(payload_value(out.payload, "decision"))
            except LightAgentError as exc:
                return MemoryPromotionDecision.keep(exc.message), exc.message
            decision.metadata.setdefault("decided_by", "hook")
    if decision is None or not decision.final:
        allows = getattr(policy, "allows_promotion", None)
        if callable(allows):
            decision = allows(candidate, _candidate_context(spec, candidate))
    if decision is None:
        decision = MemoryPromotionDecision.keep("no promotion policy")
    decision, refused = admit_promotion(
        policy, candidate, decision, _candidate_context(spec, candidate)
    )
    if refused is not None:
        write_refused(spec.ctx, "memory_promote", refused, candidate)
    blocked = decision.reason if decision.metadata.get("blocked") else None
    return decision, blocked


def _candidate_context(spec: RunSpec, candidate: MemoryCandidate) -> dict[str, Any]:
    provenance = {**candidate.metadata, "source": candidate.source, "scope": candidate.scope}
    return policy_context(spec, candidate.memory_user_id, provenance)


def provenance(
    spec: RunSpec, run: MemoryRun, fields: dict[str, Any], memory_user_id: str
) -> dict[str, Any]:
    """The metadata a write carries: ``fields`` (source, scope …) and the run's ids."""
    ctx = spec.ctx
    namespace = getattr(run.policy, "namespace", None)
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
    run: MemoryRun,
    data: Any,
    target: str,
    metadata: dict[str, Any],
    candidate_id: str | None = None,
) -> Generator[Any, Any, Any]:
    """Store one admitted write (``memory_write``, then ``after_memory_write``); the
    backend's result, or None when it failed (recorded)."""
    ctx = spec.ctx
    try:
        result = yield StoreMemory(data, target, metadata, run.memory)
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
