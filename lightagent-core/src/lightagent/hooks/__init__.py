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

from lightagent.hooks.manager import HookManager
from lightagent.hooks.policy_hook import PolicyHook
from lightagent.hooks.types import (
    AFTER_FLOW_STEP,
    AFTER_MEMORY_PROMOTE,
    AFTER_MEMORY_RETRIEVE,
    AFTER_MEMORY_WRITE,
    AFTER_MODEL_RESPONSE,
    AFTER_RUN,
    AFTER_TOOL_RESULT,
    AGENT_PHASES,
    ALL_PHASES,
    BEFORE_FLOW_STEP,
    BEFORE_MEMORY_PROMOTE,
    BEFORE_MEMORY_RETRIEVE,
    BEFORE_MEMORY_WRITE,
    BEFORE_MODEL_REQUEST,
    BEFORE_RUN,
    BEFORE_TOOL_CALL,
    FLOW_PHASES,
    GUARDRAIL_PHASES,
    HOOK_ACTIONS,
    INPUT_GUARDRAIL,
    MEMORY_PHASES,
    ON_APPROVAL_REQUIRED,
    ON_ERROR,
    ON_HANDOFF,
    ON_RERUN,
    ON_RESUME,
    OUTPUT_GUARDRAIL,
    TOOL_GUARDRAIL,
    HookContext,
    HookDecision,
    hook_name,
    normalize_hook_result,
)

__all__ = [
    "AFTER_FLOW_STEP",
    "AFTER_MEMORY_PROMOTE",
    "AFTER_MEMORY_RETRIEVE",
    "AFTER_MEMORY_WRITE",
    "AFTER_MODEL_RESPONSE",
    "AFTER_RUN",
    "AFTER_TOOL_RESULT",
    "AGENT_PHASES",
    "ALL_PHASES",
    "BEFORE_FLOW_STEP",
    "BEFORE_MEMORY_PROMOTE",
    "BEFORE_MEMORY_RETRIEVE",
    "BEFORE_MEMORY_WRITE",
    "BEFORE_MODEL_REQUEST",
    "BEFORE_RUN",
    "BEFORE_TOOL_CALL",
    "FLOW_PHASES",
    "GUARDRAIL_PHASES",
    "HOOK_ACTIONS",
    "INPUT_GUARDRAIL",
    "MEMORY_PHASES",
    "ON_APPROVAL_REQUIRED",
    "ON_ERROR",
    "ON_HANDOFF",
    "ON_RERUN",
    "ON_RESUME",
    "OUTPUT_GUARDRAIL",
    "TOOL_GUARDRAIL",
    "HookContext",
    "HookDecision",
    "HookManager",
    "PolicyHook",
    "hook_name",
    "normalize_hook_result",
]
