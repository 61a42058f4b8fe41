"""``HookManager``: runs a phase's hooks in order and folds their decisions (one decider)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ConfigurationError
from lightagent.hooks.types import (
    ALL_PHASES,
    HookContext,
    HookDecision,
    hook_name,
    known_phases,
    normalize_hook_result,
    phase_target,
)

__all__ = ["HookManager"]

_log = logging.getLogger("lightagent.hooks")


class _Fold:
    """The running result of one hook chain (per call, never shared)."""

    def __init__(self, ctx: HookContext) -> None:
        self.ctx = ctx
        self.payload = ctx.payload
        self.replaced = False
        self.metadata: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []

    def context(self) -> HookContext:
        return (
            self.ctx
            if self.payload is self.ctx.payload
            else replace(self.ctx, payload=self.payload)
        )

    def failed(self, hook: Any, exc: Exception) -> HookDecision | None:
        """Record a plain hook's exception; a hook marked ``fail_closed`` blocks instead."""
        if getattr(hook, "fail_closed", False):
            return self.add(
                hook,
                HookDecision.block(
                    f"[LA-HOOK] {hook_name(hook)} failed ({type(exc).__name__}); failing closed",
                    {"hook_failure": {"error_type": type(exc).__name__, "failure_mode": "block"}},
                ),
            )
        event = {
            "phase": self.ctx.phase,
            "hook": hook_name(hook),
            "action": "error",
            "error": _safe_text(f"{type(exc).__name__}: {exc}")[:300],
            "error_type": type(exc).__name__,
            "failure_mode": "continue",
        }
        _log.warning("hook %s failed at %s: %s", event["hook"], event["phase"], event["error_type"])
        self.events.append(event)
        self.ctx.emit("hook_decision", event)
        return None

    def add(self, hook: Any, decision: HookDecision) -> HookDecision | None:
        """Fold one decision in; returns the final decision when the chain stops."""
        failure = decision.metadata.get("hook_failure") if decision.metadata else None
        if decision.action != "continue" or failure:
            event: dict[str, Any] = {
                "phase": self.ctx.phase,
                "hook": hook_name(hook),
                "action": decision.action,
            }
            if decision.reason:
                event["reason"] = decision.reason
            if failure:
                event.update(
                    error_type=failure.get("error_type"), failure_mode=failure.get("failure_mode")
                )
            self.events.append(event)
            self.ctx.emit("hook_decision", event)
        if decision.action == "continue":
            return None
        self.metadata.update(decision.metadata)
        if decision.action == "metadata":
            return None
        if decision.action == "replace":
            self.payload = decision.payload
            self.replaced = True
            return None
        return HookDecision(decision.action, decision.payload, decision.reason, self.finish_meta())

    def finish_meta(self) -> dict[str, Any]:
        meta = dict(self.metadata)
        meta.pop("hook_failure", None)
        meta["hook_events"] = self.events
        return meta

    def result(self) -> HookDecision:
        if self.replaced:
            return HookDecision("replace", self.payload, None, self.finish_meta())
        return HookDecision("continue", None, None, self.finish_meta())


class HookManager:
    """Runs hooks in list order for one phase and folds their decisions."""

    def __init__(self, hooks: Iterable[Any] | None = None) -> None:
        self.hooks: list[Any] = []
        for hook in hooks or ():
            self.add(hook)

    def add(self, hook: Any) -> HookManager:
        """Append a hook (a callable or an object with phase methods)."""
        if not callable(hook) and not _has_phase_method(hook):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"a hook must be callable or have a phase method, got {type(hook).__name__}",
            )
        self.hooks.append(hook)
        return self

    def targets(self, phase: str) -> bool:
        """Whether some hook explicitly declares ``phase`` (used to decide on stream hold-back)."""
        return any(_declares(hook, phase) for hook in self.hooks)

    def steps(self, ctx: HookContext) -> Decider[HookDecision]:
        """The chain for ``ctx.phase`` as a decider (:mod:`lightagent.deciders`)."""
        fold = _Fold(ctx)
        for hook in list(self.hooks):
            decider = _hook_steps(hook, ctx.phase)
            if decider is not None:
                if not hook.applies(ctx.phase):
                    continue
                try:  # a fail-closed decider (PolicyHook) never raises: it blocks itself
                    decision = normalize_hook_result((yield from decider(fold.context())))
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            else:
                twin = _is_decider(hook)  # a sync __call__ and an async acall
                fn = hook if twin else phase_target(hook, ctx.phase)
                if fn is None or (twin and not hook.applies(ctx.phase)):
                    continue
                try:
                    call = Call(fn, (fold.context(),), afn=hook.acall if twin else None)
                    decision = normalize_hook_result((yield call))
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            final = fold.add(hook, decision)
            if final is not None:
                return final
        return fold.result()

    def run(self, ctx: HookContext) -> HookDecision:
        """Run the chain from sync code."""
        return decide(self.steps(ctx))

    async def arun(self, ctx: HookContext) -> HookDecision:
        """Run the chain from async code."""
        return await adecide(self.steps(ctx))


def _hook_steps(hook: Any, phase: str) -> Any:
    """The decider method of a hook object that is written as one (``steps(ctx)``)."""
    steps = getattr(hook, "steps", None)
    return steps if callable(steps) and callable(getattr(hook, "applies", None)) else None


def _safe_text(text: str) -> str:
    """Exception text with credentials redacted (it lands in traces); the type name if that fails."""
    try:
        from lightagent.redaction import redact_text

        return redact_text(text)
    except Exception:
        return text.split(":", 1)[0]


def _is_decider(hook: Any) -> bool:
    """A hook object with ``applies(phase)``, sync ``__call__`` and async ``acall`` (e.g. HumanApprovalHook)."""
    return callable(getattr(hook, "acall", None)) and callable(getattr(hook, "applies", None))


def _has_phase_method(hook: Any) -> bool:
    """Whether ``hook`` has a method named after a kernel phase, or else a plugin's phase."""
    if any(callable(getattr(hook, p, None)) for p in ALL_PHASES):
        return True
    return any(callable(getattr(hook, p, None)) for p in known_phases())


def _declares(hook: Any, phase: str) -> bool:
    """Whether ``hook`` explicitly targets ``phase`` (a phase method or a PolicyHook phase set)."""
    phases = getattr(hook, "phases", None)
    if isinstance(phases, (set, frozenset, list, tuple)):
        return phase in phases
    return callable(getattr(hook, phase, None))
