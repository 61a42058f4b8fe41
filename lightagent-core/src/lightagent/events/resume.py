"""Resume an interrupted run from its session log without repeating side effects.

:func:`plan_resume` reads the run's events and sorts the tool calls of its last model
answer into three sets: **done** (a result is recorded — ``tool.finished`` is written
the moment each call returns, ``tool.completed`` when its round ends: never executed again),
**unknown** (requested but no result — it may or may not have happened), and
**pending** (never requested: safe to run). An unknown call is settled by a
``reconcile(call)`` hook (which checks the outside world by the call's idempotency key
and returns the output, or ``None``) or by an explicit ``approve(call)``; without
either the resume stops with ``LA-APPROVAL`` naming the call — never a blind retry.
:func:`resume` / :func:`aresume` then continue the run with the loop's driver
(``agent._drive(initial_messages=…, skip_calls=…, run_id=…)``) under the same run id,
so idempotency keys match the first attempt's.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ApprovalError, ConfigurationError, PolicyError, StorageError
from lightagent.events.model import SessionEvent
from lightagent.events.ownership import check_owner, recorded_owner
from lightagent.events.projector import ContextProjector, group_turns, resolve_request
from lightagent.events.store import SessionStore, validate_session_id
from lightagent.run.run_options import RunOptions

__all__ = ["ResumePlan", "UnknownCall", "aresume", "plan_resume", "resume", "resume_steps"]

Reconcile = Callable[["UnknownCall"], Any]
Approve = Callable[["UnknownCall"], Any] | bool


@dataclass
class UnknownCall:
    """A tool call that was requested but has no recorded result."""

    call_id: str
    name: str
    arguments: Any
    idempotency_key: str | None
    sequence: int


@dataclass
class ResumePlan:
    """What resuming ``run_id`` will do.

    ``status``: ``completed``/``failed`` (nothing to do), ``continue`` (drive from
    ``messages``) or ``restart`` (no model request was recorded: run ``query`` again
    on ``history``).
    """

    run_id: str
    session_id: str
    status: str
    query: str | None = None
    messages: list[dict[str, Any]] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    done: dict[str, str] = field(default_factory=dict)
    unknown: list[UnknownCall] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    final_content: str | None = None
    error: dict[str, Any] | None = None
    #: The user the run acted for; only that user may resume it.
    user_id: str | None = None
    #: The caller's idempotency key of the run (tool-call keys derive from it).
    idempotency_key: str | None = None
    #: The handoff that started the run (a swarm hop), as its ``turn.started`` recorded it.
    handoff: dict[str, Any] | None = None


def plan_resume(events: Sequence[SessionEvent], run_id: str, *, session_id: str = "") -> ResumePlan:
    """Decide how to continue ``run_id`` from the session's ``events``."""
    turns = {t.run_id: t for t in group_turns(events)}
    turn = turns.get(run_id)
    if turn is None:
        raise StorageError(
            "LA-SESSION",
            f"Run {run_id!r} has no events in session {session_id!r}.",
            hint="Check the run id (RunResult.run_id) and the session id.",
            details={"run_id": run_id, "session_id": session_id},
        )
    mine = turn.events
    started = next((e for e in mine if e.type == "turn.started"), None)
    user_id = started.data.get("user_id") if started is not None else None
    run_key = started.data.get("idempotency_key") if started is not None else None
    handoff = started.data.get("handoff") if started is not None else None
    if turn.status in ("completed", "failed") and not _stopped(mine):
        final = next((e for e in reversed(mine) if e.type == "assistant.completed"), None)
        end = next(e for e in reversed(mine) if e.type in _ENDS)
        return ResumePlan(
            run_id,
            session_id,
            turn.status,
            query=turn.query,
            final_content=final.data.get("content") if final else None,
            error=end.data.get("error") if isinstance(end.data.get("error"), dict) else None,
            user_id=user_id,
        )
    request_event = next((e for e in reversed(mine) if e.type == "model.requested"), None)
    if request_event is None:
        prior = [e for e in events if (e.turn_id or e.run_id) != run_id]
        history = ContextProjector().messages(prior)
        return ResumePlan(
            run_id,
            session_id,
            "restart",
            query=turn.query,
            history=history,
            user_id=user_id,
            idempotency_key=run_key,
            handoff=handoff,
        )
    by_seq = {e.sequence: e for e in events}
    messages = list(resolve_request(by_seq, request_event).get("messages") or [])
    after = [e for e in mine if e.sequence > request_event.sequence]
    answer = next((e for e in after if e.type == "assistant.completed"), None)
    plan = ResumePlan(
        run_id,
        session_id,
        "continue",
        query=turn.query,
        messages=messages,
        user_id=user_id,
        idempotency_key=run_key,
        handoff=handoff,
    )
    message = answer.data.get("message") if answer is not None else None
    if not isinstance(message, dict) or not message.get("tool_calls"):
        # No answer recorded, or a final answer whose run never ended: ask the model again
        # (model calls have no side effects).
        return plan
    messages.append(message)
    # Only this round's records count: providers such as Kimi reuse ids (``functions.f:0``)
    # in every round, so an earlier round's result must not settle this round's call.
    results = {e.data.get("call_id"): e for e in after if e.type == "tool.finished"}
    # tool.completed (after the after-tool hooks) wins over the raw tool.finished record.
    results.update({e.data.get("call_id"): e for e in after if e.type == "tool.completed"})
    requests = {e.data.get("call_id"): e for e in after if e.type == "tool.requested"}
    for call in message["tool_calls"]:
        call_id = call.get("id")
        if call_id in results:
            output = results[call_id].data.get("output")
            plan.done[call_id] = output if isinstance(output, str) else json.dumps(output)
        elif call_id in requests:
            data = requests[call_id].data
            plan.unknown.append(
                UnknownCall(
                    call_id=call_id,
                    name=str(data.get("name") or (call.get("function") or {}).get("name")),
                    arguments=data.get("arguments"),
                    idempotency_key=data.get("idempotency_key"),
                    sequence=requests[call_id].sequence,
                )
            )
        else:
            plan.pending.append(call_id)
    return plan


def _stopped(events: Sequence[SessionEvent]) -> bool:
    """Whether the run's last end is ``LA-CANCELLED``: stopped by its token (or a pause), not
    finished, so a resume goes on from where it stopped instead of returning no answer."""
    end = next((e for e in reversed(events) if e.type in _ENDS), None)
    error = end.data.get("error") if end is not None and end.type in _FAILS else None
    return isinstance(error, dict) and error.get("code") == "LA-CANCELLED"


_FAILS = ("run.failed", "turn.failed")
_ENDS = ("run.completed", "turn.completed", *_FAILS)


def _settle(
    plan: ResumePlan, outputs: dict[str, Any], approve: Approve | None, approved: dict[str, bool]
) -> list[SessionEvent]:
    """Apply reconcile outputs and approvals; raise LA-APPROVAL for a call left unknown."""
    audit: list[SessionEvent] = []
    for call in plan.unknown:
        output = outputs.get(call.call_id)
        if output is not None:
            plan.done[call.call_id] = output if isinstance(output, str) else json.dumps(output)
            audit.append(_audit("tool.reconciled", plan, call, {"output": plan.done[call.call_id]}))
            continue
        if approve is True or approved.get(call.call_id):
            audit.append(
                _audit(
                    "approval.decided",
                    plan,
                    call,
                    {"decision": "retry", "kind": "unknown_tool_outcome"},
                )
            )
            continue
        raise ApprovalError(
            "LA-APPROVAL",
            f"Tool call {call.name} ({call.call_id}) of run {plan.run_id} may have run before the "
            "interruption; its outcome is unknown.",
            hint="Pass reconcile= (check by idempotency_key) or approve= to run it again.",
            details={
                "run_id": plan.run_id,
                "session_id": plan.session_id,
                "call_id": call.call_id,
                "tool": call.name,
                "arguments": call.arguments,
                "idempotency_key": call.idempotency_key,
            },
        )
    return audit


_CLAIM_RETRIES = 8


def _claimed_plan(
    store: SessionStore,
    session_id: str,
    run_id: str,
    caller: dict[str, str],
    lease_seconds: float,
) -> ResumePlan:
    """Plan the resume and claim the run (blocking: call it off the event loop)."""
    for _ in range(_CLAIM_RETRIES):
        # Read afresh on every pass, the owner included: a lost claim re-checks it.
        events = list(_all_events(store, session_id))
        check_owner(session_id, recorded_owner(events[:1]), caller)
        plan = plan_resume(events, run_id, session_id=session_id)
        _act_for_owner(plan, caller)
        if plan.status in ("completed", "failed"):
            return plan
        _refuse_handoff_target(plan)
        _refuse_if_active(plan, events, lease_seconds)
        claim = SessionEvent(
            "run.resumed",
            data={"resumer": uuid.uuid4().hex, "lease_seconds": lease_seconds},
            run_id=run_id,
            turn_id=run_id,
        )
        try:
            # Conditional on the log as read: of two resumers racing, one claims, the
            # other re-reads, sees the claim and is refused.
            store.append(
                session_id, [claim], expected_sequence=events[-1].sequence if events else 0
            )
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CONFLICT":
                raise
            continue
        return plan
    raise StorageError(
        "LA-STORAGE-CONFLICT",
        f"Could not claim run {run_id!r}: session {session_id!r} kept changing.",
        details={"run_id": run_id, "session_id": session_id, "retries": _CLAIM_RETRIES},
    )


def _refuse_handoff_target(plan: ResumePlan) -> None:
    """A swarm hop ran under a context narrowed from its source's, which the log does not
    hold: resumed on its own, the target would run under its own, wider one."""
    if isinstance(plan.handoff, dict):
        source = plan.handoff.get("source_agent")
        raise PolicyError(
            "LA-PERMISSION-WIDEN",
            f"run {plan.run_id!r} was started by a handoff from {source!r}; resumed outside "
            "its swarm it would not keep the context narrowed from its source",
            hint="Run the swarm again on the session (its conversation is kept there).",
            details={"run_id": plan.run_id, "session_id": plan.session_id, "source_agent": source},
        )


def _refuse_if_active(
    plan: ResumePlan, events: Sequence[SessionEvent], lease_seconds: float
) -> None:
    mine = [e for e in events if (e.turn_id or e.run_id) == plan.run_id]
    if not any(e.type == "run.resumed" for e in mine):
        return  # never resumed: the interrupted first attempt holds no claim
    idle = time.time() - max(e.timestamp for e in mine)
    if idle < lease_seconds:
        raise StorageError(
            "LA-RESUME-ACTIVE",
            f"Run {plan.run_id!r} is being resumed elsewhere (last activity {idle:.1f}s ago).",
            hint="Wait for that resume, or pass lease_seconds=0 if it is known to have died.",
            details={"run_id": plan.run_id, "session_id": plan.session_id, "idle_seconds": idle},
        )


def _act_for_owner(plan: ResumePlan, caller: dict[str, str]) -> None:
    """Only the user the run acted for may resume it, finished or not (the session's owner
    is checked before; this also covers sessions recorded before owners were)."""
    if plan.user_id is not None and plan.user_id != caller.get("user_id"):
        raise PolicyError(
            "LA-SESSION-OWNER",
            f"run {plan.run_id!r} of session {plan.session_id!r} acted for another user",
            details={"run_id": plan.run_id, "session_id": plan.session_id},
        )


def _caller(agent: Any, user_id: str) -> dict[str, str]:
    """Who the resume acts for: ``user_id`` (``"default_user"``, as in ``run()``) and the
    agent's tenant and project. The resumed run records as the same caller."""
    from lightagent.events.ownership import owner_of

    return owner_of(agent, user_id)


def _audit(kind: str, plan: ResumePlan, call: UnknownCall, extra: dict[str, Any]) -> SessionEvent:
    return SessionEvent(
        kind,
        data={
            "call_id": call.call_id,
            "name": call.name,
            "idempotency_key": call.idempotency_key,
            **extra,
        },
        run_id=plan.run_id,
        turn_id=plan.run_id,
    )


def _store_of(agent: Any, store: SessionStore | None) -> SessionStore:
    if store is not None:
        return store
    binding = getattr(agent, "session_binding", None)
    if binding is None:
        raise ConfigurationError(
            "LA-CONFIG",
            "resume() needs the session store: build the agent with session_store= or pass store=.",
        )
    return binding.store


def _finished(plan: ResumePlan, result_format: str) -> Any:
    from lightagent.results import RunResult

    content = plan.final_content if plan.status == "completed" else None
    result = RunResult(content=content, run_id=plan.run_id, error=plan.error)
    if result_format == "object":
        return result
    if result_format == "dict":
        return result.to_dict()
    return content if content is not None else ""


def resume_steps(
    agent: Any,
    run_id: str,
    *,
    session_id: str,
    reconcile: Reconcile | None = None,
    approve: Approve | None = None,
    store: SessionStore | None = None,
    lease_seconds: float = 300.0,
    options: RunOptions | None = None,
    **run_kwargs: Any,
) -> Decider[Any]:
    """Continue an interrupted run, as a decider (:mod:`lightagent.deciders`); a completed
    run returns its recorded answer. :func:`resume` and :func:`aresume` drive it.

    The resume acts for ``user_id`` (``"default_user"`` when not given, as in ``run()``)
    and the agent's tenant and project: anyone but the session's owner and the run's user
    is refused with ``LA-SESSION-OWNER`` before anything is read out or written.

    The resume claims the run with a ``run.resumed`` event appended on condition that
    the log is as it was read; while a resume of the run has been active within
    ``lease_seconds``, another one is refused with ``LA-RESUME-ACTIVE`` (pass
    ``lease_seconds=0`` to take over from a resume known to have died). The run options
    come as ``options=`` and keywords, as for ``run()``. ``reconcile``
    and ``approve`` may be sync or async; store reads and writes are blocking I/O (on an
    event loop they run in a worker thread).
    """
    validate_session_id(session_id)
    opts = RunOptions.of(options, run_kwargs, where="resume()")
    store = _store_of(agent, store)
    caller = _caller(agent, opts.user_id)
    plan: ResumePlan = yield Call(
        _claimed_plan, (store, session_id, run_id, caller, lease_seconds), offload=True
    )
    if plan.status in ("completed", "failed"):
        return _finished(plan, opts.result_format)
    changes: dict[str, Any] = {"session_id": session_id}
    if plan.idempotency_key is not None and opts.idempotency_key is None:
        changes["idempotency_key"] = plan.idempotency_key  # later rounds' keys match the first's
    outputs: dict[str, Any] = {}
    approved: dict[str, bool] = {}
    for call in plan.unknown:
        if reconcile is not None:
            outputs[call.call_id] = yield Call(reconcile, (call,))
        if callable(approve) and outputs.get(call.call_id) is None:
            approved[call.call_id] = bool((yield Call(approve, (call,))))
    audit = _settle(plan, outputs, approve, approved)
    if audit:
        yield Call(store.append, (session_id, audit), offload=True)
    if plan.status == "restart":
        changes["history"] = plan.history
        drive: dict[str, Any] = {"query": plan.query}
    else:
        drive = {
            "initial_messages": plan.messages,
            "skip_calls": plan.done,
            "call_keys": _first_keys(plan),
        }
    drive.update(run_id=run_id, options=opts.replace(**changes))
    # The run itself: the sync driver from resume(), the async one from aresume().
    return (yield Call(agent._drive, kwargs=drive, afn=agent._adrive))


def resume(agent: Any, run_id: str, **kwargs: Any) -> Any:
    """Continue an interrupted run from sync code (arguments of :func:`resume_steps`)."""
    return decide(resume_steps(agent, run_id, **kwargs))


async def aresume(agent: Any, run_id: str, **kwargs: Any) -> Any:
    """Continue an interrupted run on the event loop (arguments of :func:`resume_steps`)."""
    return await adecide(resume_steps(agent, run_id, **kwargs))


def _first_keys(plan: ResumePlan) -> dict[str, str]:
    """The idempotency keys recorded for the unknown calls' first attempt: a re-run gets the
    same key even where the transcript cannot rebuild it (a repair round numbers calls on)."""
    return {u.call_id: u.idempotency_key for u in plan.unknown if u.idempotency_key}


def _all_events(store: SessionStore, session_id: str) -> Any:
    iterate = getattr(store, "iter_events", None)
    return iterate(session_id) if iterate is not None else store.events(session_id)
