"""Guardrails: deciders on the user input, each tool call and the final output.

A capability on the kernel's guardrail phases (``input_guardrail``, ``tool_guardrail``,
``output_guardrail``): ``LightAgent(input_guardrails=[...])`` and the others build a
:class:`GuardrailManager` from here, and the kernel's interceptor runs its decider
(:meth:`GuardrailManager.steps`) on those phases.

A guardrail is ``fn(value, ctx)`` (or ``fn(value)``), sync or async, returning ``None`` /
``True`` (allow), ``False`` (block), a string (block with that reason), a dict
``{allowed, reason, value}`` or a :class:`GuardrailDecision`. A ``value`` rewrites the
input for the next guardrail (and, at the end, for the run): that is how output is
redacted and tool arguments are rewritten. Guardrails fail closed: one that raises or
returns something unreadable blocks.

Tool guardrails receive ``{"tool_name": ..., "arguments": {...}}``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ConfigurationError
from lightagent.keywords import seeds_keywords

__all__ = [
    "Guardrail",
    "GuardrailDecision",
    "GuardrailManager",
    "GuardrailOutcome",
    "normalize_guardrail_result",
]

_log = logging.getLogger("lightagent.guardrails")


@dataclass(frozen=True)
class GuardrailDecision:
    """A guardrail verdict: allowed or not, why, and an optional rewritten value."""

    allowed: bool = True
    reason: str | None = None
    value: Any = None

    @classmethod
    def allow(cls, value: Any = None, reason: str | None = None) -> GuardrailDecision:
        """Allow, optionally rewriting the value."""
        return cls(True, reason, value)

    @classmethod
    def block(cls, reason: str) -> GuardrailDecision:
        """Block with ``reason``."""
        return cls(False, reason or "blocked by guardrail")


def normalize_guardrail_result(result: Any, name: str = "guardrail") -> GuardrailDecision:
    """Read a guardrail's return value; anything unreadable is a typed error."""
    if result is None or result is True:
        return GuardrailDecision()
    if result is False:
        return GuardrailDecision.block(f"{name} blocked the request")
    if isinstance(result, GuardrailDecision):
        return result
    if isinstance(result, str):
        return GuardrailDecision.block(result)
    if isinstance(result, Mapping) and ("allowed" in result or "value" in result):
        return GuardrailDecision(
            bool(result.get("allowed", True)), result.get("reason"), result.get("value")
        )
    raise ConfigurationError(
        "LA-GUARDRAIL-ERROR",
        f"{name} returned {type(result).__name__}",
        hint="Return None, True, False, a reason string, {allowed, reason, value} or a GuardrailDecision.",
    )


class Guardrail:
    """One guardrail function with its name and calling convention resolved once."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        if isinstance(fn, Guardrail):
            fn, name = fn.fn, name or fn.name
        if not callable(fn):
            raise ConfigurationError(
                "LA-CONFIG", f"a guardrail must be callable, got {type(fn).__name__}"
            )
        self.fn = fn
        self.name = name or str(
            getattr(fn, "guardrail_name", None)
            or getattr(fn, "__name__", None)
            or type(fn).__name__
        )
        self.is_async = inspect.iscoroutinefunction(fn) or (
            not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)
        )
        self._takes_ctx = _accepts_two(fn)
        #: Whether the guardrail only ever rewrites text locally (set by templates); lets a
        #: stream release text early.
        self.incremental = bool(getattr(fn, "incremental", False))

    def steps(self, value: Any, ctx: Any = None) -> Decider[GuardrailDecision]:
        """The verdict on ``value`` as a decider (:mod:`lightagent.deciders`); failures block."""
        args = (value, ctx) if self._takes_ctx else (value,)
        try:
            return normalize_guardrail_result((yield Call(self.fn, args)), self.name)
        except Exception as exc:
            return self._failed(exc)

    def check(self, value: Any, ctx: Any = None) -> GuardrailDecision:
        """Run from sync code; failures block."""
        return decide(self.steps(value, ctx))

    async def acheck(self, value: Any, ctx: Any = None) -> GuardrailDecision:
        """Run from async code; failures block."""
        return await adecide(self.steps(value, ctx))

    def _failed(self, exc: Exception) -> GuardrailDecision:
        _log.warning("guardrail %s failed: %s", self.name, type(exc).__name__)
        return GuardrailDecision.block(
            f"[LA-GUARDRAIL-ERROR] guardrail {self.name} failed ({type(exc).__name__}); failing closed"
        )


def _accepts_two(fn: Any) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2 or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


@dataclass
class GuardrailOutcome:
    """The folded result of one guardrail stage."""

    allowed: bool = True
    reason: str | None = None
    value: Any = None
    changed: bool = False
    guardrail: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    def decision(self) -> GuardrailDecision:
        """As a :class:`GuardrailDecision`."""
        return GuardrailDecision(self.allowed, self.reason, self.value)


class GuardrailManager:
    """The input, tool and output guardrails of an agent, run in list order."""

    def __init__(
        self,
        *,
        input_guardrails: Iterable[Any] | None = None,
        tool_guardrails: Iterable[Any] | None = None,
        output_guardrails: Iterable[Any] | None = None,
    ) -> None:
        self.input_guardrails = [Guardrail(g) for g in input_guardrails or ()]
        self.tool_guardrails = [Guardrail(g) for g in tool_guardrails or ()]
        self.output_guardrails = [Guardrail(g) for g in output_guardrails or ()]

    def _stage(self, stage: str) -> list[Guardrail]:
        return {
            "input": self.input_guardrails,
            "tool": self.tool_guardrails,
            "output": self.output_guardrails,
        }[stage]

    def steps(self, stage: str, value: Any, ctx: Any = None) -> Decider[GuardrailOutcome]:
        """One stage (``input``/``tool``/``output``) as a decider: each guardrail in order."""
        out = GuardrailOutcome(value=value)
        for guard in self._stage(stage):
            if _fold(out, guard, (yield from guard.steps(out.value, ctx)), stage):
                break
        return out

    def run(self, stage: str, value: Any, ctx: Any = None) -> GuardrailOutcome:
        """Run one stage from sync code."""
        return decide(self.steps(stage, value, ctx))

    async def arun(self, stage: str, value: Any, ctx: Any = None) -> GuardrailOutcome:
        """Run one stage from async code."""
        return await adecide(self.steps(stage, value, ctx))

    # The seeds' method names.
    def check_input(self, query: Any, ctx: Any = None) -> GuardrailDecision:
        """Check the user input."""
        return self.run("input", query, ctx).decision()

    @seeds_keywords(name="tool_name", args="arguments")
    def check_tool(self, tool_name: str, arguments: Any, ctx: Any = None) -> GuardrailDecision:
        """Check one tool call; the value is ``{"tool_name", "arguments"}``."""
        return self.run("tool", {"tool_name": tool_name, "arguments": arguments}, ctx).decision()

    def check_output(self, text: Any, ctx: Any = None) -> GuardrailDecision:
        """Check (and maybe redact) the final output."""
        return self.run("output", text, ctx).decision()


def _fold(out: GuardrailOutcome, guard: Guardrail, decision: GuardrailDecision, stage: str) -> bool:
    if not decision.allowed:
        out.allowed = False
        out.reason = decision.reason or f"{guard.name} blocked the {stage}"
        out.guardrail = guard.name
        out.events.append({"guardrail": guard.name, "action": "block", "reason": out.reason})
        return True
    if decision.value is not None:
        value = decision.value
        if (
            stage == "tool"
            and isinstance(out.value, Mapping)
            and not (isinstance(value, Mapping) and "arguments" in value)
        ):
            value = {**out.value, "arguments": value}
        if value != out.value:
            out.value = value
            out.changed = True
            out.events.append(
                {"guardrail": guard.name, "action": "replace", "reason": decision.reason}
            )
    return False
