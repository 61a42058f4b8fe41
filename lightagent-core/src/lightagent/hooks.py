"""Runtime hooks: ordered middleware that observes, replaces, blocks, retries or falls back.

A hook is a callable ``hook(ctx)`` or an object with a method named after the phase
(``before_tool_call(ctx)``); sync or async. Its result is normalised the seeds' way:
``None``/``True`` continue, ``False`` blocks, a string blocks with that reason, a dict
(``{"allowed": False}``, ``{"action": ...}``, ``{"payload": ...}``) or a
:class:`HookDecision`. Hooks run in list order; ``replace`` chains the payload into
later hooks; the first ``block``/``retry``/``fallback`` ends the chain.

Plain hooks are failure-isolated: one that raises is recorded (and traced) and the chain
goes on. Wrap security-relevant callbacks in :class:`PolicyHook`, which fails closed on an
exception, an invalid result or a timeout.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.policy import run_coroutine_sync

__all__ = [
    "AGENT_PHASES",
    "ALL_PHASES",
    "FLOW_PHASES",
    "GUARDRAIL_PHASES",
    "HOOK_ACTIONS",
    "MEMORY_PHASES",
    "HookContext",
    "HookDecision",
    "HookManager",
    "PolicyHook",
    "hook_name",
    "normalize_hook_result",
]

_log = logging.getLogger("lightagent.hooks")

BEFORE_RUN = "before_run"
AFTER_RUN = "after_run"
ON_ERROR = "on_error"
BEFORE_MODEL_REQUEST = "before_model_request"
AFTER_MODEL_RESPONSE = "after_model_response"
BEFORE_TOOL_CALL = "before_tool_call"
AFTER_TOOL_RESULT = "after_tool_result"
ON_HANDOFF = "on_handoff"
BEFORE_MEMORY_RETRIEVE = "before_memory_retrieve"
AFTER_MEMORY_RETRIEVE = "after_memory_retrieve"
BEFORE_MEMORY_WRITE = "before_memory_write"
AFTER_MEMORY_WRITE = "after_memory_write"
BEFORE_MEMORY_PROMOTE = "before_memory_promote"
AFTER_MEMORY_PROMOTE = "after_memory_promote"
INPUT_GUARDRAIL = "input_guardrail"
TOOL_GUARDRAIL = "tool_guardrail"
OUTPUT_GUARDRAIL = "output_guardrail"
BEFORE_FLOW_STEP = "before_flow_step"
AFTER_FLOW_STEP = "after_flow_step"
ON_APPROVAL_REQUIRED = "on_approval_required"
ON_RESUME = "on_resume"
ON_RERUN = "on_rerun"

#: The agent's phases (seeds' README §12), memory phases apart.
AGENT_PHASES: tuple[str, ...] = (
    BEFORE_RUN,
    AFTER_RUN,
    ON_ERROR,
    BEFORE_MODEL_REQUEST,
    AFTER_MODEL_RESPONSE,
    BEFORE_TOOL_CALL,
    AFTER_TOOL_RESULT,
    ON_HANDOFF,
)
MEMORY_PHASES: tuple[str, ...] = (
    BEFORE_MEMORY_RETRIEVE,
    AFTER_MEMORY_RETRIEVE,
    BEFORE_MEMORY_WRITE,
    AFTER_MEMORY_WRITE,
    BEFORE_MEMORY_PROMOTE,
    AFTER_MEMORY_PROMOTE,
)
#: The loop's guardrail phases (hooks may target them too).
GUARDRAIL_PHASES: tuple[str, ...] = (INPUT_GUARDRAIL, TOOL_GUARDRAIL, OUTPUT_GUARDRAIL)
#: LightFlow's step phases.
FLOW_PHASES: tuple[str, ...] = (
    BEFORE_FLOW_STEP,
    AFTER_FLOW_STEP,
    ON_APPROVAL_REQUIRED,
    ON_RESUME,
    ON_RERUN,
)
ALL_PHASES: frozenset[str] = frozenset(
    AGENT_PHASES + MEMORY_PHASES + GUARDRAIL_PHASES + FLOW_PHASES
)
HOOK_ACTIONS: tuple[str, ...] = ("continue", "replace", "block", "retry", "fallback", "metadata")
_STOPPING = frozenset({"block", "retry", "fallback"})


@dataclass
class HookContext:
    """What a hook sees: the phase, its payload and the run's identity.

    ``state`` is a per-run scratch dict shared by the hooks of one run (never between
    runs); ``emitter`` is the run's ``emit(type, data)`` (events land in the trace).
    """

    phase: str
    payload: Any = None
    trace_id: str | None = None
    parent_trace_id: str | None = None
    run_id: str | None = None
    run_group_id: str | None = None
    user_id: str | None = None
    agent_name: str | None = None
    flow_id: str | None = None
    step_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    approval_id: str | None = None
    security_context: Any = None
    state: dict[str, Any] = field(default_factory=dict)
    emitter: Callable[[str, dict[str, Any]], Any] | None = None

    def emit(self, type: str, data: dict[str, Any]) -> None:
        """Record an event in the run's trace (a no-op without an emitter)."""
        if self.emitter is not None:
            self.emitter(type, data)


@dataclass(frozen=True)
class HookDecision:
    """A hook's verdict: continue, replace, block, retry, fallback or metadata."""

    action: str = "continue"
    payload: Any = None
    reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.action not in HOOK_ACTIONS:
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"unknown hook action {self.action!r}",
                hint=f"Use one of {', '.join(HOOK_ACTIONS)}.",
            )

    @classmethod
    def continue_(cls, metadata: Mapping[str, Any] | None = None) -> HookDecision:
        """Go on unchanged."""
        return cls("continue", metadata=dict(metadata or {}))

    @classmethod
    def replace(cls, payload: Any, reason: str | None = None) -> HookDecision:
        """Swap the phase payload; later hooks see the new one."""
        return cls("replace", payload, reason)

    @classmethod
    def block(
        cls, reason: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> HookDecision:
        """Stop: the run (or, at tool phases, this one tool call) is denied."""
        return cls("block", None, reason or "blocked by hook", dict(metadata or {}))

    @classmethod
    def retry(cls, reason: str | None = None) -> HookDecision:
        """Repeat the model call (at ``before_model_request`` / ``after_model_response``)."""
        return cls("retry", None, reason)

    @classmethod
    def fallback(cls, payload: Any, reason: str | None = None) -> HookDecision:
        """Answer with ``payload`` (text) instead of the model's answer."""
        return cls("fallback", payload, reason)

    @classmethod
    def require_approval(cls, reason: str | None = None) -> HookDecision:
        """Go on only after a human approves (at tool phases the interceptor asks the approval hook)."""
        return cls(
            "metadata", reason=reason, metadata={"requires_approval": reason or "requires approval"}
        )

    @classmethod
    def note(cls, **metadata: Any) -> HookDecision:
        """Attach metadata and go on (the seeds' ``metadata`` action)."""
        return cls("metadata", metadata=metadata)

    @property
    def stops(self) -> bool:
        """Whether this decision ends the hook chain."""
        return self.action in _STOPPING


def normalize_hook_result(result: Any) -> HookDecision:
    """Read a hook's return value (None, bool, str, dict, GuardrailDecision or HookDecision)."""
    if result is None or result is True:
        return HookDecision()
    if result is False:
        return HookDecision.block("hook returned False")
    if isinstance(result, HookDecision):
        return result
    if isinstance(result, str):
        return HookDecision.block(result)
    if isinstance(result, Mapping):
        if "action" in result:
            return HookDecision(
                str(result["action"]),
                result.get("payload"),
                result.get("reason"),
                dict(result.get("metadata") or {}),
            )
        if "allowed" in result:
            if not result["allowed"]:
                return HookDecision.block(result.get("reason") or "hook denied")
            if result.get("value") is not None:
                return HookDecision.replace(result["value"], result.get("reason"))
            return HookDecision()
        if "payload" in result:
            return HookDecision.replace(result["payload"], result.get("reason"))
        if not result:
            return HookDecision()
    allowed = getattr(result, "allowed", None)
    if isinstance(allowed, bool) and hasattr(result, "value"):  # a GuardrailDecision
        if not allowed:
            return HookDecision.block(getattr(result, "reason", None) or "guardrail blocked")
        value = result.value
        return HookDecision() if value is None else HookDecision.replace(value)
    raise ConfigurationError(
        "LA-HOOK-INVALID",
        f"a hook returned {type(result).__name__}",
        hint="Return None, True, False, a reason string, a dict or a HookDecision.",
    )


def hook_name(hook: Any) -> str:
    """A readable name for a hook in events."""
    name = getattr(hook, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(hook, "__name__", None) or type(hook).__name__)


def _target(hook: Any, phase: str) -> Callable[..., Any] | None:
    method = getattr(hook, phase, None)
    if callable(method):
        return method
    return hook if callable(hook) else None


def _declares(hook: Any, phase: str) -> bool:
    """Whether ``hook`` explicitly targets ``phase`` (a phase method or a PolicyHook phase set)."""
    if isinstance(hook, PolicyHook):
        return hook.phases is not None and phase in hook.phases
    phases = getattr(hook, "phases", None)
    if isinstance(phases, (set, frozenset, list, tuple)):
        return phase in phases
    return callable(getattr(hook, phase, None))


def _check_phases(phases: Any, owner: str) -> frozenset[str] | None:
    if phases is None:
        return None
    if isinstance(phases, str):
        phases = (phases,)
    try:
        found = frozenset(phases)
    except TypeError:
        raise ConfigurationError(
            "LA-HOOK-INVALID", f"{owner}: phases must be a set of names"
        ) from None
    unknown = sorted(p for p in found if p not in ALL_PHASES)
    if unknown:
        raise ConfigurationError(
            "LA-HOOK-INVALID",
            f"{owner}: unknown phases {unknown}",
            hint="See lightagent.hooks.ALL_PHASES for the phase names.",
        )
    return found


@dataclass(frozen=True)
class PolicyHook:
    """A fail-closed hook: an exception, an invalid result or a timeout blocks.

    ``phases`` limits where it runs (``None`` = every phase). ``failure_mode="continue"``
    makes failures non-blocking (they are still traced). A sync handler with a
    ``timeout`` runs in a worker thread; a thread cannot be killed, so a handler that
    overruns keeps running in the background after the call was blocked.
    """

    handler: Callable[..., Any]
    phases: frozenset[str] | None = None
    failure_mode: str = "block"
    timeout: float | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"PolicyHook needs a callable handler, got {type(self.handler).__name__}",
            )
        object.__setattr__(self, "phases", _check_phases(self.phases, "PolicyHook"))
        if self.failure_mode not in ("block", "continue"):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"failure_mode must be 'block' or 'continue', got {self.failure_mode!r}",
            )
        if self.timeout is not None and not (
            isinstance(self.timeout, (int, float))
            and not isinstance(self.timeout, bool)
            and self.timeout > 0
        ):
            raise ConfigurationError(
                "LA-HOOK-INVALID", f"timeout must be > 0, got {self.timeout!r}"
            )
        if self.name is None:
            object.__setattr__(self, "name", hook_name(self.handler))

    def applies(self, phase: str) -> bool:
        """Whether this hook runs at ``phase``."""
        return self.phases is None or phase in self.phases

    def _failed(
        self, ctx: HookContext, error: BaseException, timed_out: bool = False
    ) -> HookDecision:
        kind = "timed out" if timed_out else f"failed ({type(error).__name__})"
        meta = {
            "hook_failure": {
                "hook": self.name,
                "error_type": "TimeoutError" if timed_out else type(error).__name__,
                "failure_mode": self.failure_mode,
            }
        }
        if self.failure_mode == "continue":
            return HookDecision("continue", metadata=meta)
        code = "LA-HOOK-TIMEOUT" if timed_out else "LA-HOOK"
        return HookDecision.block(f"[{code}] policy hook {self.name} {kind}; failing closed", meta)

    def __call__(self, ctx: HookContext) -> HookDecision:
        """Run the handler from sync code."""
        if not self.applies(ctx.phase):
            return HookDecision()
        fn = _target(self.handler, ctx.phase)
        try:
            if inspect.iscoroutinefunction(fn):
                return normalize_hook_result(run_coroutine_sync(self._bounded(fn(ctx))))
            if self.timeout is None:
                result = fn(ctx)
                if inspect.isawaitable(result):
                    result = run_coroutine_sync(self._bounded(result))
                return normalize_hook_result(result)
            return normalize_hook_result(self._threaded(fn, ctx))
        except (TimeoutError, asyncio.TimeoutError) as exc:
            return self._failed(ctx, exc, timed_out=True)
        except Exception as exc:
            return self._failed(ctx, exc)

    async def acall(self, ctx: HookContext) -> HookDecision:
        """Run the handler from async code (a sync handler with a timeout goes to a thread)."""
        if not self.applies(ctx.phase):
            return HookDecision()
        fn = _target(self.handler, ctx.phase)
        try:
            if inspect.iscoroutinefunction(fn):
                result = await self._bounded(fn(ctx))
            elif self.timeout is not None:
                result = await asyncio.wait_for(asyncio.to_thread(fn, ctx), self.timeout)
            else:
                result = fn(ctx)
                if inspect.isawaitable(result):
                    result = await self._bounded(result)
            return normalize_hook_result(result)
        except (TimeoutError, asyncio.TimeoutError) as exc:
            return self._failed(ctx, exc, timed_out=True)
        except Exception as exc:
            return self._failed(ctx, exc)

    async def _bounded(self, awaitable: Any) -> Any:
        if self.timeout is None:
            return await awaitable
        return await asyncio.wait_for(awaitable, self.timeout)

    def _threaded(self, fn: Callable[..., Any], ctx: HookContext) -> Any:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn(ctx)
            except BaseException as exc:
                box["error"] = exc

        thread = threading.Thread(target=target, name=f"policy-hook-{self.name}", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            raise TimeoutError(f"policy hook {self.name} exceeded {self.timeout}s")
        if "error" in box:
            raise box["error"]
        return box.get("value")


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
            "error": f"{type(exc).__name__}: {exc}"[:300],
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
        if not callable(hook) and not any(callable(getattr(hook, p, None)) for p in ALL_PHASES):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"a hook must be callable or have a phase method, got {type(hook).__name__}",
            )
        self.hooks.append(hook)
        return self

    def targets(self, phase: str) -> bool:
        """Whether some hook explicitly declares ``phase`` (used to decide on stream hold-back)."""
        return any(_declares(hook, phase) for hook in self.hooks)

    def run(self, ctx: HookContext) -> HookDecision:
        """Run the chain from sync code."""
        fold = _Fold(ctx)
        for hook in list(self.hooks):
            if isinstance(hook, PolicyHook):
                if not hook.applies(ctx.phase):
                    continue
                decision = hook(fold.context())
            elif _is_decider(hook):
                if not hook.applies(ctx.phase):
                    continue
                try:
                    decision = normalize_hook_result(hook(fold.context()))
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            else:
                fn = _target(hook, ctx.phase)
                if fn is None:
                    continue
                try:
                    result = fn(fold.context())
                    if inspect.isawaitable(result):
                        result = run_coroutine_sync(_await(result))
                    decision = normalize_hook_result(result)
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            final = fold.add(hook, decision)
            if final is not None:
                return final
        return fold.result()

    async def arun(self, ctx: HookContext) -> HookDecision:
        """Run the chain from async code."""
        fold = _Fold(ctx)
        for hook in list(self.hooks):
            if isinstance(hook, PolicyHook):
                if not hook.applies(ctx.phase):
                    continue
                decision = await hook.acall(fold.context())
            elif _is_decider(hook):
                if not hook.applies(ctx.phase):
                    continue
                try:
                    decision = normalize_hook_result(await hook.acall(fold.context()))
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            else:
                fn = _target(hook, ctx.phase)
                if fn is None:
                    continue
                try:
                    result = fn(fold.context())
                    if inspect.isawaitable(result):
                        result = await result
                    decision = normalize_hook_result(result)
                except Exception as exc:
                    stop = fold.failed(hook, exc)
                    if stop is not None:
                        return stop
                    continue
            final = fold.add(hook, decision)
            if final is not None:
                return final
        return fold.result()


def _is_decider(hook: Any) -> bool:
    """A hook object with ``applies(phase)``, sync ``__call__`` and async ``acall`` (e.g. HumanApprovalHook)."""
    return callable(getattr(hook, "acall", None)) and callable(getattr(hook, "applies", None))


async def _await(awaitable: Any) -> Any:
    return await awaitable
