"""Hook vocabulary: phase names, :class:`HookContext`, :class:`HookDecision` and result normalisation."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError

__all__ = [
    "AFTER_MEMORY_PROMOTE",
    "AFTER_MEMORY_RETRIEVE",
    "AFTER_MEMORY_WRITE",
    "AFTER_MODEL_RESPONSE",
    "AFTER_RUN",
    "AFTER_TOOL_RESULT",
    "AGENT_PHASES",
    "ALL_PHASES",
    "BEFORE_MEMORY_PROMOTE",
    "BEFORE_MEMORY_RETRIEVE",
    "BEFORE_MEMORY_WRITE",
    "BEFORE_MODEL_REQUEST",
    "BEFORE_RUN",
    "BEFORE_TOOL_CALL",
    "GUARDRAIL_PHASES",
    "HOOK_ACTIONS",
    "INPUT_GUARDRAIL",
    "MEMORY_PHASES",
    "ON_ERROR",
    "ON_HANDOFF",
    "OUTPUT_GUARDRAIL",
    "PHASES_GROUP",
    "TOOL_GUARDRAIL",
    "HookContext",
    "HookDecision",
    "check_phases",
    "hook_name",
    "known_phases",
    "normalize_hook_result",
    "phase_target",
]

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
#: The kernel's phases; :func:`known_phases` adds the ones installed plugins register.
ALL_PHASES: frozenset[str] = frozenset(AGENT_PHASES + MEMORY_PHASES + GUARDRAIL_PHASES)
#: The entry-point group through which a distribution registers phases of its own
#: (``my-plugin = "my_plugin.hooks:PHASES"``: a tuple of phase names).
PHASES_GROUP = "lightagent.hook_phases"
HOOK_ACTIONS: tuple[str, ...] = ("continue", "replace", "block", "retry", "fallback", "metadata")
_STOPPING = frozenset({"block", "retry", "fallback"})
_PHASE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_known: frozenset[str] | None = None
_known_lock = threading.Lock()


def known_phases() -> frozenset[str]:
    """The kernel's phases plus every installed ``lightagent.hook_phases`` entry point's.

    Read once, on first need (a hook object without a kernel phase method, or a
    ``phases=`` set naming a phase the kernel lacks), so ``import lightagent`` loads no
    plugin. An entry point that fails to load, or a name that is not a phase name
    (lowercase letters, digits, ``_``), is skipped.
    """
    global _known
    if _known is None:
        with _known_lock:
            if _known is None:
                _known = ALL_PHASES | _plugin_phases()
    return _known


def _plugin_phases() -> frozenset[str]:
    from lightagent.entry_points import loaded

    found: set[str] = set()
    for names in loaded(PHASES_GROUP):  # a broken plugin is left out of the others' hooks
        for name in names if isinstance(names, (tuple, list, frozenset, set)) else ():
            if isinstance(name, str) and _PHASE_NAME.fullmatch(name):
                found.add(name)
    return frozenset(found)


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


HookResult = HookDecision  # the roadmap's name for what a hook returns


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


def phase_target(hook: Any, phase: str) -> Callable[..., Any] | None:
    """What to call on ``hook`` at ``phase``: its method named after the phase, else the hook if callable."""
    method = getattr(hook, phase, None)
    if callable(method):
        return method
    return hook if callable(hook) else None


def check_phases(phases: Any, owner: str) -> frozenset[str] | None:
    """``phases`` as a frozenset of known phase names (None stays None); ``LA-HOOK-INVALID`` naming ``owner`` otherwise."""
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
        unknown = sorted(p for p in unknown if p not in known_phases())
    if unknown:
        raise ConfigurationError(
            "LA-HOOK-INVALID",
            f"{owner}: unknown phases {unknown}",
            hint="See lightagent.hooks.ALL_PHASES and known_phases() for the phase names.",
        )
    return found
