"""Flow hooks: ``before_flow_step``, ``after_flow_step``, ``on_approval_required``, ``on_resume``, ``on_rerun``.

A hook is a callable taking one context (the core's ``HookContext``), or an object with a method named after the
phase; sync or async. Results are normalised as in the seeds: ``None``/``True`` continue,
``False`` blocks, a ``str`` blocks with that reason, ``{"allowed": False}`` blocks,
``{"action": ...}`` is that decision, ``{"payload": ...}`` replaces, and any object with
an ``action`` attribute (``lightagent.hooks.HookDecision``) is read as such. An action
this module does not know blocks: a decision is never silently dropped.

A plain hook that raises is isolated (recorded in the trace, the run goes on); a hook
whose ``failure_mode`` is ``"block"`` (``PolicyHook``) fails closed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lightagent_flow.invoke import call_maybe_async

__all__ = [
    "AFTER_FLOW_STEP",
    "BEFORE_FLOW_STEP",
    "FLOW_HOOK_PHASES",
    "FLOW_PHASES",
    "ON_APPROVAL_REQUIRED",
    "ON_RERUN",
    "ON_RESUME",
    "FlowHookDecision",
    "FlowHookRunner",
]

BEFORE_FLOW_STEP = "before_flow_step"
AFTER_FLOW_STEP = "after_flow_step"
ON_APPROVAL_REQUIRED = "on_approval_required"
ON_RESUME = "on_resume"
ON_RERUN = "on_rerun"

#: LightFlow's step phases, added to lightagent's hook phases through the
#: ``lightagent.hook_phases`` entry point (so ``PolicyHook(phases=...)`` and hook objects
#: with only a flow phase method are accepted).
FLOW_PHASES: tuple[str, ...] = (
    BEFORE_FLOW_STEP,
    AFTER_FLOW_STEP,
    ON_APPROVAL_REQUIRED,
    ON_RESUME,
    ON_RERUN,
)
#: The name this module used first.
FLOW_HOOK_PHASES = FLOW_PHASES
_ACTIONS = {"continue", "replace", "block", "retry", "fallback", "metadata"}


@dataclass
class FlowHookDecision:
    """The combined decision of the hooks for one phase."""

    action: str = "continue"
    payload: Any = None
    reason: str | None = None
    hook: str | None = None


def _make_context(**fields: Any) -> Any:
    from lightagent.hooks import HookContext

    return HookContext(**fields)


def _name(hook: Any) -> str:
    return str(
        getattr(hook, "name", None) or getattr(hook, "__name__", None) or type(hook).__name__
    )


def normalize(result: Any) -> FlowHookDecision:
    """Read any hook result as a decision (see the module docstring)."""
    if result is None or result is True:
        return FlowHookDecision()
    if result is False:
        return FlowHookDecision("block", reason="hook returned False")
    if isinstance(result, str):
        return FlowHookDecision("block", reason=result)
    if isinstance(result, dict):
        if result.get("allowed") is False:
            return FlowHookDecision("block", reason=str(result.get("reason") or "not allowed"))
        if result.get("allowed") is True and result.get("value") is not None:
            return FlowHookDecision("replace", payload=result["value"])
        if "action" in result:
            return _checked(str(result["action"]), result.get("payload"), result.get("reason"))
        if "payload" in result:
            return FlowHookDecision("replace", payload=result["payload"])
        return FlowHookDecision()
    action = getattr(result, "action", None)
    allowed = getattr(result, "allowed", None)
    if action is None and isinstance(allowed, bool):  # a GuardrailDecision
        if not allowed:
            return FlowHookDecision(
                "block", reason=str(getattr(result, "reason", None) or "not allowed")
            )
        value = getattr(result, "value", None)
        return FlowHookDecision() if value is None else FlowHookDecision("replace", payload=value)
    if action is not None:
        action = getattr(action, "value", action)  # an Enum action
        return _checked(
            str(action), getattr(result, "payload", None), getattr(result, "reason", None)
        )
    return FlowHookDecision("block", reason=f"hook returned an unreadable {type(result).__name__}")


def _checked(action: str, payload: Any, reason: Any) -> FlowHookDecision:
    if action not in _ACTIONS:
        return FlowHookDecision("block", reason=f"unknown hook action {action!r}")
    return FlowHookDecision(action, payload=payload, reason=None if reason is None else str(reason))


class FlowHookRunner:
    """Runs the flow's hooks for one phase, in list order, and records their decisions."""

    def __init__(self, hooks: Sequence[Any] | None) -> None:
        self.hooks = list(hooks or ())

    def _target(self, hook: Any, phase: str) -> Callable[..., Any] | None:
        phases = getattr(hook, "phases", None)
        if phases and phase not in phases:
            return None
        method = getattr(hook, phase, None)
        if callable(method):
            return method
        acall = getattr(hook, "acall", None)  # PolicyHook's async entry point
        if callable(acall):
            return acall
        return hook if callable(hook) else None

    async def run(
        self,
        phase: str,
        payload: Any,
        emit: Callable[[str, dict[str, Any]], Any],
        **context: Any,
    ) -> FlowHookDecision:
        """The chained decision for ``phase``; ``replace`` payloads chain into later hooks."""
        final = FlowHookDecision()
        current = payload
        for hook in self.hooks:
            fn = self._target(hook, phase)
            if fn is None:
                continue
            ctx = _make_context(phase=phase, payload=current, emitter=emit, **context)
            name = _name(hook)
            try:
                decision = normalize(await call_maybe_async(fn, ctx))
            except Exception as exc:
                closed = getattr(hook, "failure_mode", "continue") == "block"
                emit(
                    "hook_decision",
                    {
                        "phase": phase,
                        "hook": name,
                        "action": "block" if closed else "continue",
                        "error": str(exc),
                        "error_type": type(exc).__name__,
                        "failure_mode": "block" if closed else "continue",
                    },
                )
                if not closed:
                    continue
                decision = FlowHookDecision("block", reason=f"hook {name} failed: {exc}")
            decision.hook = name
            if decision.action != "continue":
                emit(
                    "hook_decision",
                    {
                        "phase": phase,
                        "hook": name,
                        "action": decision.action,
                        "reason": decision.reason,
                    },
                )
            if decision.action == "replace":
                if isinstance(decision.payload, dict):
                    current = {**current, **decision.payload}
                else:  # a bare value (a new query or output text) replaces the payload whole
                    current = decision.payload
                final = FlowHookDecision("replace", payload=current, hook=name)
                continue
            if decision.action in ("continue", "metadata"):
                continue
            if decision.action == "block":
                emit("hook_block", {"phase": phase, "hook": name, "reason": decision.reason})
            return decision
        return final
