"""Promoting a memory candidate after its run: once, durably, from any process.

``agent.promote_memory_candidate(candidate_id, decision)`` runs :func:`promotion`, a
generator of effects driven by :func:`drive_sync` or :func:`drive_async` (one
definition for both). The decision is the caller's (a person), else a
``before_memory_promote`` hook's, else the policy's callback; ``keep`` changes nothing.

A final decision is recorded in the candidate's session log by a *conditional* append:
it succeeds only when the log still ends where this promoter read it. A promoter that
loses the race re-reads the log, finds the other decision and reports it
(``memory_promotion_idempotent``) without writing anything, so two processes promoting
the same candidate store it once. The memory is written after the decision is on
record; should the writer die in between, promoting again completes the write on
backends that are idempotent by memory id (``idempotent_writes = True``, as
``SharedMemoryPool``); on others it reports ``stored: False`` instead of risking a
second copy.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import LightAgentError, PolicyError, StorageError, ValidationError

from lightagent_memory.candidates import (
    DECISION_EVENTS,
    EVENT_ACTIONS,
    MemoryCandidate,
    MemoryPromotionDecision,
    admit_promotion,
    coerce_decision,
    hook_blocked,
)

__all__ = ["PromotionJob", "drive_async", "drive_sync", "promotion", "session_candidates"]

_CLAIM_RETRIES = 16


@dataclass
class PromotionJob:
    """What one promotion needs from its agent."""

    agent_name: str
    book: Any
    policy: Any
    memory: Any
    candidate_id: str
    decision: Any = None
    session_id: str | None = None
    store: Any = None
    interceptor: Any = None
    observers: list[Any] = field(default_factory=list)
    reviewer_id: str | None = None
    #: The promoting agent's tenant: only a candidate of that tenant can be decided.
    tenant_id: str | None = None


@dataclass
class _Phase:
    phase: str
    payload: dict[str, Any]
    ctx: Any


@dataclass
class _Events:
    session_id: str
    after: int


@dataclass
class _Append:
    session_id: str
    events: list[Any]
    expected: int | None


@dataclass
class _Store:
    data: Any
    user_id: str
    metadata: dict[str, Any]
    tenant_id: str | None = None


@dataclass
class _LogState:
    """A candidate as its session log tells it."""

    candidate: MemoryCandidate | None = None
    decision: MemoryPromotionDecision | None = None
    stored: bool = False
    last: int = 0

    def read(self, events: list[Any], candidate_id: str) -> None:
        for event in events:
            self.last = max(self.last, event.sequence)
            data = event.data
            if data.get("candidate_id") != candidate_id:
                continue
            if event.type == "memory.written":
                self.stored = True
                continue
            kind = data.get("trace_type")
            raw = data.get("candidate")
            if isinstance(raw, dict) and self.candidate is None:
                self.candidate = MemoryCandidate.from_dict(raw)
            action = EVENT_ACTIONS.get(str(kind))
            if action is not None and self.decision is None:
                value = data.get("value")
                self.decision = MemoryPromotionDecision(
                    action,
                    data.get("reason"),
                    value if action == "rewrite" else None,
                    {"decided_by": data.get("decided_by"), "sequence": event.sequence},
                )


def session_candidates(events: list[Any]) -> list[MemoryCandidate]:
    """The candidates a session log holds, each with its current status."""
    found: dict[str, MemoryCandidate] = {}
    for event in events:
        data = event.data
        if event.type != "memory.promotion" or not isinstance(data.get("candidate"), dict):
            if event.type == "memory.promotion" and data.get("candidate_id") in found:
                action = EVENT_ACTIONS.get(str(data.get("trace_type")))
                if action is not None:
                    _set_status(found[data["candidate_id"]], action)
            continue
        candidate = found.get(data["candidate"].get("candidate_id"))
        if candidate is None:
            candidate = MemoryCandidate.from_dict(data["candidate"])
            found[candidate.candidate_id] = candidate
        action = EVENT_ACTIONS.get(str(data.get("trace_type")))
        if action is not None:
            _set_status(candidate, action)
    return list(found.values())


def _set_status(candidate: MemoryCandidate, action: str) -> None:
    candidate.status = "rejected" if action == "reject" else "promoted"
    candidate.injectable = action != "reject"


def _not_found(candidate_id: str, session_id: str | None) -> ValidationError:
    where = f" in session {session_id!r}" if session_id else " on this agent"
    return ValidationError(
        "LA-MEMORY-CANDIDATE",
        f"no memory candidate {candidate_id!r}{where}",
        hint="List them with agent.list_memory_candidates(session_id=...); a candidate made "
        "in another process is found through its session_id.",
        details={"candidate_id": candidate_id, "session_id": session_id},
    )


def _session_event(event: dict[str, Any], agent_name: str) -> Any:
    from lightagent.events.mapping import session_event_from_trace

    session_event = session_event_from_trace(event, agent_id=agent_name)
    # Not part of any run: the turn projections (history, resume) leave it alone.
    session_event.run_id = session_event.turn_id = session_event.step_id = None
    return session_event


def promotion(job: PromotionJob) -> Generator[Any, Any, MemoryPromotionDecision]:
    """Decide ``job.candidate_id``, record the decision once, and write the memory."""
    import dataclasses

    from lightagent.interceptors import RunContext
    from lightagent.run.ids import new_id

    cid = job.candidate_id
    candidate = job.book.get(cid) if job.book is not None else None
    if candidate is not None:  # a copy: the book's entry changes only through book.decide
        candidate = dataclasses.replace(candidate, metadata=dict(candidate.metadata))
    sid = job.session_id or (candidate.session_id if candidate is not None else None)
    log = None
    if job.store is not None and sid:
        log = _LogState()
        log.read((yield _Events(sid, 0)), cid)
        if log.last == 0:
            log = None  # no such session here: the agent's own record is all there is
        elif candidate is None:
            candidate = log.candidate
    if candidate is None:
        raise _not_found(cid, sid)
    if candidate.tenant_id != job.tenant_id:  # a reviewer decides for its own tenant only
        raise PolicyError(
            "LA-MEMORY-TENANT",
            f"memory candidate {cid!r} belongs to another tenant",
            hint="Promote it from an agent whose security_context names the candidate's tenant.",
            details={"candidate_id": cid, "session_id": sid},
        )
    ctx = RunContext(
        run_id=new_id("promote"),
        trace_id=candidate.trace_id or new_id("trace"),
        agent_name=job.agent_name,
        user_id=candidate.original_user_id,
        session_id=sid,
        parent_trace_id=candidate.parent_trace_id,
        run_group_id=candidate.run_group_id,
        observers=list(job.observers),
    )

    def event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
        ctx.emit(kind, data)
        return {
            "type": kind,
            "data": data,
            "trace_id": ctx.trace_id,
            "parent_trace_id": ctx.parent_trace_id,
            "run_group_id": ctx.run_group_id,
        }

    existing = log.decision if log is not None else None
    if existing is None and candidate.status in ("promoted", "rejected"):
        existing = MemoryPromotionDecision("approve" if candidate.injectable else "reject")
    if existing is not None:
        return (yield from _already(job, ctx, event, candidate, existing, log, sid))

    decision, decided_by, blocked = yield from _decide(job, ctx, candidate)
    if not decision.final:
        if blocked is not None:
            record = event("memory_promotion_blocked", {"candidate_id": cid, "reason": blocked})
            if log is not None:
                yield _Append(sid or "", [_session_event(record, job.agent_name)], None)
        decision.metadata.update(candidate_id=cid, status=candidate.status, idempotent=False)
        return decision

    _set_status(candidate, decision.action)
    data = {
        "candidate_id": cid,
        "decided_by": decided_by,
        "reason": decision.reason,
        "reviewer_id": job.reviewer_id,
        "candidate": candidate.to_dict(),
    }
    if decision.action == "rewrite":
        data["value"] = decision.value
    record = {
        "type": DECISION_EVENTS[decision.action],
        "data": data,
        "trace_id": ctx.trace_id,
        "parent_trace_id": ctx.parent_trace_id,
        "run_group_id": ctx.run_group_id,
    }
    if log is not None:
        won = yield from _claim(job, log, sid or "", cid, _session_event(record, job.agent_name))
        if not won:
            candidate.status = "candidate"
            return (yield from _already(job, ctx, event, candidate, log.decision, log, sid))
    if job.book is not None and not job.book.decide(candidate):
        return (yield from _already(job, ctx, event, candidate, decision, log, sid))
    ctx.emit(record["type"], data)
    return (yield from _complete(job, ctx, event, candidate, decision, log, sid, False))


def _decide(
    job: PromotionJob, ctx: Any, candidate: MemoryCandidate
) -> Generator[Any, Any, tuple[MemoryPromotionDecision, str, str | None]]:
    """(decision, who decided, why it was blocked or None)."""
    requested = None if job.decision is None else coerce_decision(job.decision)
    decided_by = "human" if requested is not None else "policy"
    if job.interceptor is not None:
        out = yield _Phase(
            "before_memory_promote",
            {
                "candidate": candidate.to_dict(),
                "decision": requested.to_dict() if requested is not None else None,
            },
            ctx,
        )
        if out is not None and out.action == "block":
            reason = out.reason or "blocked by a hook"
            hook_blocked(ctx, reason, out)
            return MemoryPromotionDecision.keep(reason), "hook", reason
        if out is not None and out.action == "replace" and out.payload is not None:
            from lightagent.run.phases import payload_value

            requested = coerce_decision(payload_value(out.payload, "decision"))
            decided_by = "hook"
    pctx = _policy_ctx(candidate, ctx)
    if requested is None:
        allows = getattr(job.policy, "allows_promotion", None)
        if callable(allows) and getattr(job.policy, "memory_promotion_admission", None):
            requested = allows(candidate, pctx)
        else:
            # the seeds: ``promote_memory_candidate(id)`` promotes; a policy callback, when
            # there is one, still decides (and may refuse), as do the hooks above
            requested = MemoryPromotionDecision.approve("promoted by the caller")
            decided_by = "caller"
    # the text a promotion stores passes the write admission, as every write does
    requested, refused = admit_promotion(job.policy, candidate, requested, pctx)
    if refused is not None:
        from lightagent_memory.recall import write_refused

        write_refused(ctx, "memory_promote", refused, candidate)
    blocked = requested.reason if requested.metadata.get("blocked") else None
    return requested, decided_by, blocked


def _policy_ctx(candidate: MemoryCandidate, ctx: Any) -> dict[str, Any]:
    return {
        "user_id": candidate.original_user_id,
        "memory_user_id": candidate.memory_user_id,
        "agent_name": candidate.agent_name,
        "trace_id": candidate.trace_id,
        "run_id": candidate.run_id,
        "session_id": ctx.session_id,
        "tenant_id": candidate.tenant_id,
        "source": candidate.source,
        "scope": candidate.scope,
        "metadata": dict(candidate.metadata),
    }


def _claim(
    job: PromotionJob, log: _LogState, sid: str, cid: str, record: Any
) -> Generator[Any, Any, bool]:
    """Append the decision only where the log ended when read; False when another won."""
    for _ in range(_CLAIM_RETRIES):
        try:
            stored = yield _Append(sid, [record], log.last)
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CONFLICT":
                raise
            log.read((yield _Events(sid, log.last)), cid)
            if log.decision is not None:
                return False
            continue
        log.last = stored[-1].sequence if stored else log.last
        return True
    raise StorageError(
        "LA-STORAGE-CONFLICT",
        f"could not record the decision on memory candidate {cid!r}: session {sid!r} kept changing",
        details={"candidate_id": cid, "session_id": sid, "retries": _CLAIM_RETRIES},
    )


def _already(
    job: PromotionJob,
    ctx: Any,
    event: Any,
    candidate: MemoryCandidate,
    decision: MemoryPromotionDecision | None,
    log: _LogState | None,
    sid: str | None,
) -> Generator[Any, Any, MemoryPromotionDecision]:
    """The candidate was decided before: report that decision, finishing its write if safe."""
    decision = decision or MemoryPromotionDecision.keep()
    _set_status(candidate, decision.action)
    if job.book is not None:
        job.book.decide(candidate)
    record = event(
        "memory_promotion_idempotent",
        {"candidate_id": candidate.candidate_id, "action": decision.action},
    )
    if log is not None:
        yield _Append(sid or "", [_session_event(record, job.agent_name)], None)
    unfinished = decision.promotes and log is not None and not log.stored
    if unfinished and getattr(job.memory, "idempotent_writes", False):
        return (yield from _complete(job, ctx, event, candidate, decision, log, sid, True))
    out = MemoryPromotionDecision(
        decision.action, decision.reason, decision.value, dict(decision.metadata)
    )
    out.metadata.update(
        candidate_id=candidate.candidate_id,
        status=candidate.status,
        idempotent=True,
        stored=None if not decision.promotes else (not unfinished),
    )
    return out


def _complete(
    job: PromotionJob,
    ctx: Any,
    event: Any,
    candidate: MemoryCandidate,
    decision: MemoryPromotionDecision,
    log: _LogState | None,
    sid: str | None,
    idempotent: bool,
) -> Generator[Any, Any, MemoryPromotionDecision]:
    """Write the promoted memory (approve/rewrite), record it, and tell the after hooks."""
    result: Any = None
    stored: bool | None = None
    if decision.promotes:
        text = decision.value if decision.action == "rewrite" else candidate.data
        metadata = candidate.write_metadata(decision)
        try:
            result = yield _Store(text, candidate.memory_user_id, metadata, candidate.tenant_id)
            stored = True
        except Exception as exc:  # the decision stands; the write is reported unfinished
            stored = False
            error = (
                exc
                if isinstance(exc, LightAgentError)
                else StorageError("LA-MEMORY", f"{type(exc).__name__}: {exc}")
            )
            record = event("error", {"stage": "memory_promote", "error": error.to_dict()})
        else:
            memory_id = result.get("memory_id") if isinstance(result, dict) else None
            record = event(
                "memory_write",
                {
                    "candidate_id": candidate.candidate_id,
                    "memory_id": memory_id or candidate.candidate_id,
                    "user_id": candidate.original_user_id,
                    "source": candidate.source,
                    "scope": candidate.scope,
                    "chars": len(text) if isinstance(text, str) else None,
                },
            )
        if log is not None:
            yield _Append(sid or "", [_session_event(record, job.agent_name)], None)
    if job.interceptor is not None:
        yield _Phase(
            "after_memory_promote",
            {"candidate": candidate.to_dict(), "decision": decision.to_dict(), "result": result},
            ctx,
        )
    out = MemoryPromotionDecision(
        decision.action, decision.reason, decision.value, dict(decision.metadata)
    )
    out.metadata.update(
        candidate_id=candidate.candidate_id,
        status=candidate.status,
        idempotent=idempotent,
        stored=stored,
    )
    return out


# -- the two drivers: each effect performed, nothing decided -----------------------------
def _perform(job: PromotionJob, effect: Any) -> Any:
    """Perform one effect from sync code (the async driver sends store I/O here, in a thread)."""
    if isinstance(effect, _Events):
        return list(job.store.events(effect.session_id, after=effect.after))
    if isinstance(effect, _Append):
        return job.store.append(effect.session_id, effect.events, expected_sequence=effect.expected)
    if isinstance(effect, _Store):
        from lightagent.bridge import call_sync

        return call_sync(*_store_call(job.memory, effect))
    return job.interceptor.on_phase_sync(effect.ctx, effect.phase, effect.payload)


def _step(gen: Any, value: Any, exc: BaseException | None) -> tuple[bool, Any]:
    """(finished, the result or the next effect)."""
    try:
        return False, (gen.throw(exc) if exc is not None else gen.send(value))
    except StopIteration as stop:
        return True, stop.value


def drive_sync(job: PromotionJob) -> MemoryPromotionDecision:
    """Run :func:`promotion` from sync code."""
    gen = promotion(job)
    value: Any = None
    exc: BaseException | None = None
    while True:
        done, effect = _step(gen, value, exc)
        if done:
            return effect
        exc = None
        try:
            value = _perform(job, effect)
        except Exception as error:
            exc, value = error, None


async def drive_async(job: PromotionJob) -> MemoryPromotionDecision:
    """Run :func:`promotion` from async code (blocking stores run in a worker thread)."""
    import asyncio

    from lightagent.bridge import call_async

    gen = promotion(job)
    value: Any = None
    exc: BaseException | None = None
    while True:
        done, effect = _step(gen, value, exc)
        if done:
            return effect
        exc = None
        try:
            if isinstance(effect, _Phase):
                value = await job.interceptor.on_phase(effect.ctx, effect.phase, effect.payload)
            elif isinstance(effect, _Store):
                value = await call_async(*_store_call(job.memory, effect))
            else:
                value = await asyncio.to_thread(_perform, job, effect)
        except Exception as error:
            exc, value = error, None


def _store_call(memory: Any, effect: _Store) -> tuple[Any, ...]:
    from lightagent.memory.protocol import store_call

    return store_call(memory, effect.data, effect.user_id, effect.metadata, effect.tenant_id)
