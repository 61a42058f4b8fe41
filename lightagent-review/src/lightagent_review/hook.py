"""``HumanApprovalHook``: a human decides before a sensitive tool call or handoff runs.

Without a reviewer the hook stores a pending :class:`ApprovalRequest` and blocks the call
with ``LA-APPROVAL-PENDING`` naming the request id; the model sees that denial and the
run goes on. Resolve the request in the store, then rerun with ``approval_id=<id>``: the
decision is consumed once (durably, in the store), and only for the same action, the
same arguments (by digest), the same user and agents. A reviewer callable (sync or
async) decides inline; if it does not answer within ``timeout`` the call is denied with
``LA-APPROVAL-TIMEOUT`` and the request stays pending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ApprovalError, ConfigurationError
from lightagent.hooks.types import HookContext, HookDecision

from lightagent_review.models import (
    ApprovalDecision,
    ApprovalRequest,
    HumanFeedback,
    argument_digest,
)

__all__ = ["HumanApprovalHook", "record_feedback"]

_PHASES = frozenset({"before_tool_call", "on_handoff"})


def _summary(request: ApprovalRequest) -> dict[str, Any]:
    """Event data for a request: names and digests, never argument values."""
    return {
        "request_id": request.request_id,
        "phase": request.action,
        "action_name": request.action_name,
        "tool": request.tool_name,
        "call_id": request.call_id,
        "argument_digest": request.argument_digest,
        "source_agent": request.source_agent,
        "target_agent": request.target_agent,
    }


def _redacted(value: Any) -> Any:
    try:
        from lightagent.redaction import redact_or_marker
    except ImportError:  # pragma: no cover - the events package ships with the core
        return value
    return redact_or_marker(value)


class HumanApprovalHook:
    """Ask a human before the listed tools (or every tool) run, and before handoffs."""

    #: A failure of this hook blocks (it is a decider, not an observer).
    fail_closed = True

    def __init__(
        self,
        *,
        store: Any = None,
        reviewer: Callable[[ApprovalRequest], Any] | None = None,
        tools: Iterable[str] | None = None,
        phases: Iterable[str] | None = None,
        timeout: float | None = None,
        allowed_decisions: Iterable[str] = ("approve", "reject", "edit", "respond"),
        name: str = "human_approval",
    ) -> None:
        if store is None:
            from lightagent_review.stores import InMemoryReviewStore

            store = InMemoryReviewStore()
        for method in ("create_request", "get_request", "resolve", "get_decision", "consume"):
            if not callable(getattr(store, method, None)):
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"store= lacks {method}(); use InMemoryReviewStore, JsonReviewStore or SqlReviewStore",
                )
        if reviewer is not None and not callable(reviewer):
            raise ConfigurationError("LA-CONFIG", "reviewer= must be callable")
        self.phases = frozenset(phases) if phases is not None else _PHASES
        unknown = self.phases - _PHASES
        if unknown:
            raise ConfigurationError(
                "LA-CONFIG",
                f"HumanApprovalHook supports before_tool_call and on_handoff, not {sorted(unknown)}",
            )
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ConfigurationError("LA-CONFIG", f"timeout must be > 0, got {timeout!r}")
        self.store = store
        self.reviewer = reviewer
        self.tools = frozenset(tools) if tools is not None else None
        self.timeout = timeout
        self.allowed_decisions = tuple(allowed_decisions)
        self.name = name

    # -- hook protocol ------------------------------------------------------------------
    def applies(self, phase: str) -> bool:
        """Whether the hook runs at ``phase``."""
        return phase in self.phases

    def wants(self, ctx: HookContext) -> bool:
        """Whether this call needs approval (phase and tool filter)."""
        if ctx.phase not in self.phases:
            return False
        if ctx.phase == "before_tool_call" and self.tools is not None:
            return (ctx.payload or {}).get("tool_name") in self.tools
        return True

    def __call__(self, ctx: HookContext) -> HookDecision:
        """Decide from sync code."""
        return self.decide(ctx)

    async def acall(self, ctx: HookContext) -> HookDecision:
        """Decide from async code."""
        return await self.adecide(ctx)

    # -- deciding -------------------------------------------------------------------------
    def steps(
        self, ctx: HookContext, *, force: bool = False, reason: str | None = None
    ) -> Decider[HookDecision]:
        """Approve, deny or park the call in ``ctx``, as a decider (``force`` skips the tool
        filter). Store calls are blocking I/O: on an event loop they run in a worker thread."""
        if not force and not self.wants(ctx):
            return HookDecision()
        prior = yield Call(self._from_approval_id, (ctx,), offload=True)
        if prior is not None:
            return prior  # type: ignore[no-any-return]
        request = yield Call(self._new_request, (ctx, reason), offload=True)
        if self.reviewer is None:
            return self._pending(ctx, request)
        try:
            answer = yield Call(self.reviewer, (request,), timeout=self.timeout)
        except TimeoutError:
            return self._timed_out(ctx, request)
        return (yield Call(self._settle, (ctx, request, answer), offload=True))  # type: ignore[no-any-return]

    def decide(
        self, ctx: HookContext, *, force: bool = False, reason: str | None = None
    ) -> HookDecision:
        """:meth:`steps` from sync code."""
        return decide(self.steps(ctx, force=force, reason=reason))

    async def adecide(
        self, ctx: HookContext, *, force: bool = False, reason: str | None = None
    ) -> HookDecision:
        """:meth:`steps` from async code."""
        return await adecide(self.steps(ctx, force=force, reason=reason))

    # -- parts --------------------------------------------------------------------------
    @staticmethod
    def _action(ctx: HookContext) -> tuple[str | None, Any]:
        payload = ctx.payload or {}
        if ctx.phase == "on_handoff":
            target = payload.get("target_agent")
            return f"handoff:{target}", {"query": payload.get("query"), "target_agent": target}
        return payload.get("tool_name"), payload.get("arguments")

    def _binding(self, ctx: HookContext) -> dict[str, Any]:
        name, args = self._action(ctx)
        payload = ctx.payload or {}
        handoff = ctx.phase == "on_handoff"
        return {
            "action": ctx.phase,
            "action_name": name,
            "argument_digest": argument_digest(name, args),
            "user_id": ctx.user_id,
            "source_agent": (payload.get("source_agent") or ctx.agent_name) if handoff else None,
            "target_agent": payload.get("target_agent") if handoff else None,
        }

    def _from_approval_id(self, ctx: HookContext) -> HookDecision | None:
        approval_id = ctx.approval_id or (ctx.metadata or {}).get("approval_id")
        if not approval_id:
            return None
        request = self.store.get_request(approval_id)
        if request is None:
            ctx.emit("approval_rejected", {"request_id": approval_id, "reason": "unknown request"})
            return None
        binding = self._binding(ctx)
        if request.binding() != binding:
            # Another call of the run (silently), or the same action with other arguments,
            # user or agents: this approval does not cover it and a new one is needed.
            if request.action_name == binding["action_name"]:
                mismatched = sorted(k for k, v in binding.items() if request.binding().get(k) != v)
                ctx.emit(
                    "approval_rejected",
                    {"request_id": approval_id, "reason": "context mismatch", "fields": mismatched},
                )
            return None
        decision = self.store.get_decision(approval_id)
        if decision is None:
            return self._pending(ctx, request, existing=True)
        try:
            decision = self.store.consume(approval_id)
        except ApprovalError as exc:
            ctx.emit("approval_rejected", {"request_id": approval_id, "reason": exc.code})
            return HookDecision.block(
                f"[{exc.code}] approval {approval_id} was already used; a new approval is needed",
                {"code": exc.code, "request_id": approval_id},
            )
        return self._apply(ctx, request, decision)

    def _new_request(self, ctx: HookContext, reason: str | None) -> ApprovalRequest:
        name, args = self._action(ctx)
        payload = ctx.payload or {}
        request = ApprovalRequest(
            action=ctx.phase,
            run_id=ctx.run_id,
            trace_id=ctx.trace_id,
            action_name=name,
            tool_name=payload.get("tool_name"),
            # The reviewer sees the arguments with credentials redacted; the binding digest
            # is taken from the real ones.
            arguments=_redacted(args),
            argument_digest=argument_digest(name, args),
            source_agent=payload.get("source_agent") or ctx.agent_name,
            target_agent=payload.get("target_agent"),
            allowed_decisions=self.allowed_decisions,
            user_id=ctx.user_id,
            call_id=payload.get("call_id"),
            reason=reason,
        )
        self.store.create_request(request)
        ctx.emit("approval_required", {**_summary(request), "reason": reason})
        return request

    def _pending(
        self, ctx: HookContext, request: ApprovalRequest, existing: bool = False
    ) -> HookDecision:
        ctx.emit("approval_pending", _summary(request))
        what = request.action_name or request.action
        return HookDecision.block(
            f"[LA-APPROVAL-PENDING] {what} needs human approval; request {request.request_id} is "
            f"{'still ' if existing else ''}pending. Do not retry it now.",
            {"code": "LA-APPROVAL-PENDING", "request_id": request.request_id},
        )

    def _timed_out(self, ctx: HookContext, request: ApprovalRequest) -> HookDecision:
        ctx.emit("approval_timeout", {**_summary(request), "timeout": self.timeout})
        return HookDecision.block(
            f"[LA-APPROVAL-TIMEOUT] no reviewer decided on {request.action_name} within "
            f"{self.timeout}s; request {request.request_id} stays pending",
            {"code": "LA-APPROVAL-TIMEOUT", "request_id": request.request_id},
        )

    def _settle(self, ctx: HookContext, request: ApprovalRequest, answer: Any) -> HookDecision:
        decision = ApprovalDecision.coerce(answer, request.request_id)
        if not decision.decided:
            return self._pending(ctx, request)
        self.store.resolve(request.request_id, decision)
        decision = self.store.consume(request.request_id)
        return self._apply(ctx, request, decision)

    def _apply(
        self, ctx: HookContext, request: ApprovalRequest, decision: ApprovalDecision
    ) -> HookDecision:
        ctx.emit(
            f"approval_{decision.action}",
            {**_summary(request), "reason": decision.reason, "reviewer_id": decision.reviewer_id},
        )
        meta = {
            "code": "LA-APPROVAL",
            "request_id": request.request_id,
            "approval": decision.action,
        }
        approved = ctx.state.setdefault("approved_calls", set())
        call_id = (ctx.payload or {}).get("call_id")
        if decision.action == "approve":
            approved.add((call_id, request.argument_digest))
            return HookDecision("continue", metadata=meta)
        if decision.action == "edit":
            approved.add((call_id, argument_digest(request.action_name, decision.arguments)))
            payload = {**(ctx.payload or {}), "arguments": dict(decision.arguments)}
            return HookDecision.replace(payload, "arguments edited by reviewer")
        if decision.action == "respond":
            return HookDecision.block(f"Reviewer response: {decision.response}", meta)
        return HookDecision.block(
            f"[LA-APPROVAL] {request.action_name} was rejected by the reviewer: {decision.reason or 'rejected'}",
            meta,
        )


def record_feedback(run: Any, feedback: HumanFeedback, store: Any = None) -> dict[str, Any]:
    """Keep ``feedback`` in ``store`` (optional) and emit a ``human_feedback`` event on ``run``.

    ``run`` is a :class:`~lightagent.interceptors.RunContext` or any ``emit(type, data)``
    callable; the event data is the feedback's fields.
    """
    if not isinstance(feedback, HumanFeedback):
        raise ConfigurationError(
            "LA-CONFIG", f"expected HumanFeedback, got {type(feedback).__name__}"
        )
    if store is not None:
        store.add_feedback(feedback)
    emit = run if callable(run) and not hasattr(run, "emit") else getattr(run, "emit", None)
    data = feedback.to_dict()
    if emit is not None:
        emit("human_feedback", data)
    return data
