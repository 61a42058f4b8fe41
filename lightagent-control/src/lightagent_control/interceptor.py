"""The loop's interceptor: hooks, guardrails, policy and human approval on one decision path.

:func:`build_interceptor` is what ``LightAgent`` calls (seam S3). The phase logic is
written once as a decider (:mod:`lightagent.deciders`) composed of the hooks', guardrails',
policy's, gate's and approval's own deciders; the sync and the async driver of that module
perform its calls, so ``arun`` never blocks the event loop on our account.

Every decision leaves an event through ``run.emit``: ``hook_decision`` for each hook,
guardrail and policy verdict that is not a plain continue, ``approval_*`` for approvals
and ``capability.gate`` for security-gate checks. (``hook_block`` and ``guardrail_block``
are emitted by the loop when it acts on a block.)
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol

from lightagent.deciders import Decider, adecide, decide
from lightagent.errors import ConfigurationError, LightAgentError
from lightagent.hooks import HookContext, HookDecision
from lightagent.interceptors import PhaseOutcome
from lightagent.policy import PolicyDecision, PolicyRequest, policy_steps

from lightagent_control.approval import approver as approval_path
from lightagent_control.approval import argument_digest
from lightagent_control.hook_manager import HookManager
from lightagent_control.specs import CapabilityRisk, CapabilitySpec
from lightagent_control.stream import OutputScreen

__all__ = ["ControlInterceptor", "GuardrailRunner", "build_interceptor"]

_CONTINUE = PhaseOutcome()
_GUARD_STAGE = {"input_guardrail": "input", "tool_guardrail": "tool", "output_guardrail": "output"}
_TOOL_PHASES = ("before_tool_call", "tool_guardrail")


def _tool_name(tool: Any) -> str:
    """The name of an OpenAI tool schema (``{"type": "function", "function": {"name": …}}``)."""
    function = tool.get("function") if isinstance(tool, dict) else None
    return str(function.get("name") if isinstance(function, dict) else tool)


def _tool_spec(name: str, registry: Any, context: Any) -> CapabilitySpec:
    """The capability spec of tool ``name``: from the registry, else a default L2 spec."""
    if registry is not None:
        for key in (f"tool.{name}", name):
            spec = registry.spec(key, context)
            if spec is not None:
                return spec
    return CapabilitySpec(f"tool.{name}", risk=CapabilityRisk.SENSITIVE)


class ControlInterceptor:
    """Implements :class:`~lightagent.interceptors.Interceptor` for hooks, guardrails, policy and approval."""

    def __init__(
        self,
        *,
        hooks: Any = None,
        input_guardrails: Iterable[Any] | None = None,
        tool_guardrails: Iterable[Any] | None = None,
        output_guardrails: Iterable[Any] | None = None,
        policy_engine: Any = None,
        capability_registry: Any = None,
        approval: Any = None,
        security_context: Any = None,
    ) -> None:
        #: Whether anything besides hooks was given (see :attr:`idle`).
        self._controls = any(
            v is not None and v is not False and v != []
            for v in (
                input_guardrails,
                tool_guardrails,
                output_guardrails,
                policy_engine,
                capability_registry,
                approval,
            )
        )
        if not isinstance(hooks, HookManager):
            hooks = HookManager(_named(hooks, "hook"))
        self.hooks = hooks
        self.guardrails = _guardrails(
            input_guardrails=_named(input_guardrails, "guardrail"),
            tool_guardrails=_named(tool_guardrails, "guardrail"),
            output_guardrails=_named(output_guardrails, "guardrail"),
        )
        if policy_engine is not None:
            # An engine (steps/evaluate) as it is; policies (a callable or a list) go into
            # lightagent-review's PolicyEngine.
            if callable(policy_engine) or isinstance(policy_engine, (list, tuple)):
                policies = (
                    policy_engine if isinstance(policy_engine, (list, tuple)) else [policy_engine]
                )
                policy_engine = _policy_engine(policies)
            elif not callable(getattr(policy_engine, "evaluate", None)):
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"policy_engine= must be a PolicyEngine, got {type(policy_engine).__name__}",
                )
        if policy_engine is None and capability_registry is not None:
            policy_engine = getattr(capability_registry, "policy_engine", None)
        self.policy_engine = policy_engine
        self.capability_registry = capability_registry
        self.approval = approval_path(approval)
        self.security_context = security_context
        self._states: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
        self._states_lock = threading.Lock()

    def bound_to(self, context: Any) -> ControlInterceptor:
        """A copy whose runs answer to ``context`` (hooks, guardrails and policy shared)."""
        twin = copy.copy(self)
        twin.security_context = context
        return twin

    # -- what the loop asks ---------------------------------------------------------------
    @property
    def idle(self) -> bool:
        """Whether runs may skip this interceptor: it holds only a hook manager with no hook
        yet (``agent.hooks`` on an agent built without controls) and no security context."""
        return not self._controls and self.security_context is None and not self.hooks.hooks

    @property
    def streams_output_guardrails(self) -> bool:
        """Whether a streamed answer must go through :meth:`output_screen` (output is judged)."""
        return bool(self.guardrails.output_guardrails) or self.hooks.targets("output_guardrail")

    def output_screen(self, run: Any) -> OutputScreen | None:
        """A per-run hold-back for streamed text, or None when nothing judges the output."""
        if not self.streams_output_guardrails:
            return None
        guards = self.guardrails.output_guardrails
        hold_all = self.hooks.targets("output_guardrail") or any(
            g.is_async or not g.incremental for g in guards
        )
        return OutputScreen(
            self.guardrails, self._hook_ctx(run, "output_guardrail", None), hold_all=hold_all
        )

    def on_phase_sync(self, run: Any, phase: str, payload: dict[str, Any]) -> PhaseOutcome:
        """Decide on ``phase`` from the sync driver."""
        return decide(self._phase(run, phase, payload))

    async def on_phase(self, run: Any, phase: str, payload: dict[str, Any]) -> PhaseOutcome:
        """Decide on ``phase`` from the async driver."""
        return await adecide(self._phase(run, phase, payload))

    # -- per-run state --------------------------------------------------------------------
    def _state(self, run: Any) -> dict[str, Any]:
        with self._states_lock:
            try:
                return self._states.setdefault(run, {})
            except TypeError:  # not weak-referenceable: fall back to the run's metadata
                return run.metadata.setdefault("_lightagent_control_state", {})

    def _hook_ctx(self, run: Any, phase: str, payload: Any) -> HookContext:
        metadata = getattr(run, "metadata", None) or {}
        emitter = run.emit if getattr(run, "active", True) else None
        return HookContext(
            phase=phase,
            payload=payload,
            trace_id=getattr(run, "trace_id", None),
            parent_trace_id=getattr(run, "parent_trace_id", None),
            run_id=getattr(run, "run_id", None),
            run_group_id=getattr(run, "run_group_id", None),
            user_id=getattr(run, "user_id", None),
            agent_name=getattr(run, "agent_name", None),
            metadata=metadata,
            approval_id=getattr(run, "approval_id", None) or metadata.get("approval_id"),
            security_context=self.security_context or metadata.get("security_context"),
            state=self._state(run),
            emitter=emitter,
        )

    # -- the phase logic (sans-IO) --------------------------------------------------------
    def _phase(self, run: Any, phase: str, payload: dict[str, Any]) -> Decider[PhaseOutcome]:
        ctx = self._hook_ctx(run, phase, payload)
        stage = _GUARD_STAGE.get(phase)
        if stage is not None:
            out = yield from self._guard_phase(ctx, stage)
            if out.action == "block":
                return out
            if out.action == "replace":
                ctx = replace(ctx, payload=out.payload)
            if phase == "tool_guardrail" and self._polices_tools(ctx):
                policy_out = yield from self._policy_phase(ctx)
                if policy_out.action == "block":
                    return policy_out
                if policy_out.action == "replace":
                    ctx = replace(ctx, payload=policy_out.payload)
                    out = policy_out
            hooked = yield from self._hook_phase(ctx)
            if phase == "tool_guardrail" and hooked.action in ("continue", "replace"):
                extra = hooked.metadata.get("requires_approval")
                if extra:
                    current = (
                        replace(ctx, payload=hooked.payload) if hooked.action == "replace" else ctx
                    )
                    approved = yield from self._approve(current, str(extra))
                    if approved.action != "continue":
                        return approved
            if hooked.action != "continue" or out.action != "replace":
                return hooked
            return out
        out = yield from self._hook_phase(ctx)
        if phase == "before_tool_call" and out.action in ("continue", "replace"):
            current = replace(ctx, payload=out.payload) if out.action == "replace" else ctx
            extra = out.metadata.get("requires_approval")
            if extra or (self.approval is not None and self.approval.wants(current)):
                approved = yield from self._approve(
                    current, extra if isinstance(extra, str) else None
                )
                if approved.action != "continue":
                    return approved
        if phase == "on_handoff" and out.action in ("continue", "replace"):
            current = replace(ctx, payload=out.payload) if out.action == "replace" else ctx
            if self.approval is not None and self.approval.wants(current):
                approved = yield from self._approve(current, None)
                if approved.action != "continue":
                    return approved
        if phase == "before_model_request" and out.action in ("continue", "replace"):
            return self._offer_permitted(run, ctx, out)
        return out

    def _offer_permitted(self, run: Any, ctx: HookContext, out: PhaseOutcome) -> PhaseOutcome:
        """Leave out of the request every tool the run's security context does not permit.

        The model is then never offered one, and a call naming it is the loop's unknown
        tool (``LA-TOOL-NOT-FOUND``), as for a tool the agent does not have. The gate still
        checks each call (deadline, resource, network, sandbox) when it is made. Each tool
        withheld leaves one ``capability.gate`` event per run (decision ``withhold``).
        """
        context = ctx.security_context
        permissions = getattr(context, "permissions", None)
        payload: Any = out.payload if out.action == "replace" else ctx.payload
        params: Any = payload.get("params") if isinstance(payload, dict) else None
        tools = params.get("tools") if isinstance(params, dict) else None
        if permissions is None or not tools:
            return out
        kept: list[Any] = []
        withheld: list[tuple[CapabilitySpec, str]] = []
        for tool in tools:
            spec = _tool_spec(_tool_name(tool), self.capability_registry, context)
            reason = permissions.denial_reason(spec.name, spec.risk, spec.effects)
            if reason is None:
                kept.append(tool)
            else:
                withheld.append((spec, reason))
        if not withheld:
            return out
        self._audit_withheld(run, ctx, withheld)
        narrowed = {**params, "tools": kept or None}
        if not kept:
            narrowed.pop("tool_choice", None)
        return PhaseOutcome("replace", {**payload, "params": narrowed}, out.reason, out.metadata)

    def _audit_withheld(
        self, run: Any, ctx: HookContext, withheld: list[tuple[CapabilitySpec, str]]
    ) -> None:
        reported = self._state(run).setdefault("withheld", set())
        context = ctx.security_context
        for spec, reason in withheld:
            if spec.name in reported:
                continue
            reported.add(spec.name)
            ctx.emit(
                "capability.gate",
                {
                    "decision": "withhold",
                    "capability": spec.name,
                    "risk": f"L{int(spec.risk)}",
                    "check": "permissions",
                    "reason": reason,
                    "tenant_id": getattr(context, "tenant_id", None),
                    "run_id": ctx.run_id,
                },
            )

    def _polices_tools(self, ctx: HookContext) -> bool:
        return (
            self.policy_engine is not None
            or self.capability_registry is not None
            or ctx.security_context is not None
        )

    def _hook_phase(self, ctx: HookContext) -> Decider[PhaseOutcome]:
        if not self.hooks.hooks:
            return _CONTINUE
        decision: HookDecision = yield from self.hooks.steps(ctx)
        return _to_outcome(decision, ctx.phase)

    def _guard_phase(self, ctx: HookContext, stage: str) -> Decider[PhaseOutcome]:
        guards = getattr(self.guardrails, f"{stage}_guardrails")
        if not guards:
            return _CONTINUE
        payload = ctx.payload or {}
        if stage == "input":
            value: Any = payload.get("query")
        elif stage == "output":
            value = payload.get("content")
        else:
            value = {"tool_name": payload.get("tool_name"), "arguments": payload.get("arguments")}
        result = yield from self.guardrails.steps(stage, value, ctx)
        hook = f"{stage}_guardrails"
        for event in result.events:
            ctx.emit(
                "hook_decision", {"phase": ctx.phase, "hook": hook, "adapter": "guardrail", **event}
            )
        if not result.allowed:
            return PhaseOutcome(
                "block",
                None,
                result.reason,
                {"code": "LA-GUARDRAIL", "guardrail": result.guardrail, "stage": stage},
            )
        if not result.changed:
            return _CONTINUE
        if stage == "input":
            return PhaseOutcome("replace", {**payload, "query": result.value})
        if stage == "output":
            return PhaseOutcome("replace", {**payload, "content": result.value})
        new_args = result.value.get("arguments") if isinstance(result.value, dict) else result.value
        return PhaseOutcome("replace", {**payload, "arguments": new_args})

    def _policy_phase(self, ctx: HookContext) -> Decider[PhaseOutcome]:
        payload = ctx.payload or {}
        name = str(payload.get("tool_name"))
        args: dict[str, Any] = (
            payload["arguments"] if isinstance(payload.get("arguments"), dict) else {}
        )
        context = ctx.security_context
        spec = _tool_spec(name, self.capability_registry, context)
        if context is not None:
            bound = (
                context.narrow(run_id=ctx.run_id)
                if getattr(context, "run_id", None) is None
                else context
            )
            from lightagent_control.gate import CapabilityGate

            # Policies run on their own step below (once); the gate checks the context and audits.
            gate = CapabilityGate(self.capability_registry, audit=ctx.emitter)
            gate.policy_engine = None
            try:
                yield from gate.steps(replace(spec, requires_approval=False), "tools", args, bound)
            except LightAgentError as denied:
                self._policy_event(ctx, "block", denied.message, "capability_gate")
                return PhaseOutcome("block", None, denied.message, {"code": denied.code})
        if self.policy_engine is None:
            if spec.requires_approval:
                return (yield from self._approve(ctx, f"{spec.name} requires approval"))
            return _CONTINUE
        request = PolicyRequest(spec, "tools", dict(args), context or _RunView(ctx))
        decision: PolicyDecision = yield from policy_steps(self.policy_engine, request)
        if decision.action != "allow":
            self._policy_event(ctx, decision.action, decision.reason, "policy_engine")
        if not decision.allowed:
            return PhaseOutcome("block", None, decision.reason, {"code": "LA-POLICY"})
        out = _CONTINUE
        if decision.arguments is not None and decision.arguments != args:
            out = PhaseOutcome("replace", {**payload, "arguments": dict(decision.arguments)})
            ctx = replace(ctx, payload=out.payload)
        if decision.requires_approval:
            approved = yield from self._approve(ctx, decision.reason)
            if approved.action != "continue":
                return approved
        return out

    def _approve(self, ctx: HookContext, reason: str | None) -> Decider[PhaseOutcome]:
        payload = ctx.payload or {}
        key = (
            payload.get("call_id"),
            argument_digest(payload.get("tool_name"), payload.get("arguments")),
        )
        if key in ctx.state.get("approved_calls", ()):
            return _CONTINUE
        if self.approval is None:
            text = f"[LA-APPROVAL] {payload.get('tool_name')} requires approval ({reason or 'policy'}) and no approval= is configured"
            self._policy_event(ctx, "block", text, "approval")
            return PhaseOutcome("block", None, text, {"code": "LA-APPROVAL"})
        decision: HookDecision = yield from self.approval.steps(ctx, force=True, reason=reason)
        return _to_outcome(decision, ctx.phase)

    @staticmethod
    def _policy_event(ctx: HookContext, action: str, reason: str | None, hook: str) -> None:
        ctx.emit(
            "hook_decision",
            {
                "phase": ctx.phase,
                "hook": hook,
                "adapter": "policy",
                "action": action,
                "reason": reason,
            },
        )


class _RunView:
    """What a policy sees as ``request.context`` when no SecurityContext is set."""

    def __init__(self, ctx: HookContext) -> None:
        self.metadata = ctx.metadata
        self.user_id = ctx.user_id
        self.run_id = ctx.run_id
        self.agent_id = ctx.agent_name
        self.session_id = None
        self.permissions = None


def _to_outcome(decision: HookDecision, phase: str) -> PhaseOutcome:
    meta = dict(decision.metadata)
    action = "continue" if decision.action == "metadata" else decision.action
    if action == "block":
        meta.setdefault("code", "LA-GUARDRAIL" if phase in _GUARD_STAGE else "LA-HOOK")
    payload = decision.payload
    if action == "fallback" and isinstance(payload, dict) and "content" in payload:
        payload = payload["content"]
    if action == "continue":
        return PhaseOutcome("continue", None, None, meta) if meta else _CONTINUE
    return PhaseOutcome(action, payload, decision.reason, meta)


class GuardrailRunner(Protocol):
    """What the interceptor needs of guardrails (lightagent-guardrails' ``GuardrailManager``).

    Guardrails are a capability on the kernel's guardrail phases: the runner holds each
    stage's guardrails (objects with ``is_async`` and ``incremental``) and decides on a
    stage with :meth:`steps`, a decider (:mod:`lightagent.deciders`) whose outcome has
    ``allowed``, ``reason``, ``value``, ``changed``, ``guardrail`` and ``events``.
    """

    input_guardrails: list[Any]
    tool_guardrails: list[Any]
    output_guardrails: list[Any]

    def steps(self, stage: str, value: Any, ctx: Any = None) -> Decider[Any]:
        """One stage's verdict, as a decider."""
        ...

    def run(self, stage: str, value: Any, ctx: Any = None) -> Any:
        """One stage's verdict, from sync code (the stream's hold-back uses it)."""
        ...


class _NoGuardrails:
    """The runner of an agent without guardrails: every stage is empty (never asked)."""

    def __init__(self) -> None:
        self.input_guardrails: list[Any] = []
        self.tool_guardrails: list[Any] = []
        self.output_guardrails: list[Any] = []

    def steps(self, stage: str, value: Any, ctx: Any = None) -> Decider[Any]:
        raise AssertionError("no guardrails: the interceptor skips empty stages")
        yield  # pragma: no cover - a generator, like any runner's steps

    def run(self, stage: str, value: Any, ctx: Any = None) -> Any:
        raise AssertionError("no guardrails: the interceptor skips empty stages")


def _guardrails(**stages: list[Any]) -> GuardrailRunner:
    """The guardrail runner of lightagent-guardrails, or the empty one without guardrails.

    Asking for guardrails without that distribution is ``LA-MISSING-EXTRA`` naming
    ``pip install 'lightagent-core[guardrails]'``.
    """
    if not any(stages.values()):
        return _NoGuardrails()
    given = ", ".join(f"{name}=" for name, value in stages.items() if value)
    from lightagent.lazy import plugin_name

    return plugin_name("GuardrailManager", given)(**stages)  # type: ignore[no-any-return]


def _policy_engine(policies: Iterable[Any]) -> Any:
    """lightagent-review's ``PolicyEngine`` over ``policies`` (``LA-MISSING-EXTRA`` without it)."""
    from lightagent.lazy import plugin_name

    return plugin_name("PolicyEngine", "policy_engine= (policies)")(policies)


def _named(items: Iterable[Any] | None, kind: str) -> list[Any]:
    """Resolve registered names: ``"privacy_input"`` or ``("name", {factory kwargs})``.

    A registered guardrail or hook is a factory; it is called (with the kwargs) to build
    the object. Anything else passes through unchanged.
    """
    out: list[Any] = []
    for item in items or ():
        name: str | None = None
        kwargs: dict[str, Any] = {}
        if isinstance(item, str):
            name = item
        elif (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], dict)
        ):
            name, kwargs = item
        if name is None:
            out.append(item)
            continue
        from lightagent.plugins import get_registry

        factory = get_registry().resolve(kind, name)
        try:
            out.append(factory(**kwargs) if callable(factory) else factory)
        except TypeError as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"the {kind} {name!r} needs arguments: {exc}",
                hint=f'Pass ("{name}", {{...}}) with its factory arguments, or build it yourself.',
            ) from None
    return out


def build_interceptor(
    *,
    hooks: Any = None,
    input_guardrails: Iterable[Any] | None = None,
    tool_guardrails: Iterable[Any] | None = None,
    output_guardrails: Iterable[Any] | None = None,
    policy_engine: Any = None,
    capability_registry: Any = None,
    approval: Any = None,
    security_context: Any = None,
) -> ControlInterceptor | None:
    """The interceptor for these controls, or None when none is given (the loop's fast path)."""
    given = [
        hooks,
        input_guardrails,
        tool_guardrails,
        output_guardrails,
        policy_engine,
        capability_registry,
        approval,
        security_context,
    ]
    if not any(v is not None and v is not False and v != [] for v in given):
        return None
    return ControlInterceptor(
        hooks=hooks,
        input_guardrails=input_guardrails,
        tool_guardrails=tool_guardrails,
        output_guardrails=output_guardrails,
        policy_engine=policy_engine,
        capability_registry=capability_registry,
        approval=approval,
        security_context=security_context,
    )
