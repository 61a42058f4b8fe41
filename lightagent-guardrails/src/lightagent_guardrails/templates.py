"""The seeds' guardrail templates: privacy input, sensitive tool confirmation, risky parameters, output redaction.

Each factory returns a guardrail ``fn(value, ctx)`` for ``LightAgent(input_guardrails=…,
tool_guardrails=…, output_guardrails=…)``. The pattern-based ones are marked
``incremental`` (their verdict on a prefix holds for the whole text), which lets a
streamed answer be released before it ends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lightagent.errors import ConfigurationError

from lightagent_guardrails.manager import GuardrailDecision

__all__ = [
    "DEFAULT_PRIVACY_PATTERNS",
    "high_risk_parameter_guardrail",
    "output_redaction_guardrail",
    "privacy_input_guardrail",
    "sensitive_tool_confirmation_guardrail",
]

#: Personal data and credentials blocked on input and redacted on output.
DEFAULT_PRIVACY_PATTERNS: tuple[str, ...] = (
    r"\b\d{3}-\d{2}-\d{4}\b",  # US social security number
    r"\b(?:\d[ -]?){12,18}\d\b",  # payment card numbers (13-19 digits, spaces or dashes)
    r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b",  # e-mail address
    r"(?i)\b(?:api[_-]?key|secret|password|passwd|token)\s*[:=]\s*\S+",  # credential assignments
    r"\bsk-[A-Za-z0-9_-]{12,}",  # provider API keys
)


def _compile(patterns: Iterable[str | re.Pattern[str]] | None) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in DEFAULT_PRIVACY_PATTERNS if patterns is None else patterns:
        if isinstance(pattern, re.Pattern):
            compiled.append(pattern)
            continue
        if not isinstance(pattern, str) or not pattern:
            raise ConfigurationError(
                "LA-CONFIG", f"a guardrail pattern must be a regex string, got {pattern!r}"
            )
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ConfigurationError(
                "LA-CONFIG", f"invalid guardrail pattern {pattern!r}: {exc}"
            ) from None
    return compiled


def _named(fn: Callable[..., Any], name: str, incremental: bool = False) -> Callable[..., Any]:
    fn.__name__ = name
    fn.guardrail_name = name  # type: ignore[attr-defined]
    fn.incremental = incremental  # type: ignore[attr-defined]
    return fn


def privacy_input_guardrail(
    patterns: Iterable[str | re.Pattern[str]] | None = None,
    *,
    reason: str = "The input contains personal or secret data; remove it and try again.",
) -> Callable[[Any, Any], GuardrailDecision]:
    """Block input that matches any of ``patterns`` (default: :data:`DEFAULT_PRIVACY_PATTERNS`)."""
    compiled = _compile(patterns)

    def privacy_input(value: Any, ctx: Any = None) -> GuardrailDecision:
        text = value if isinstance(value, str) else str(value or "")
        if any(p.search(text) for p in compiled):
            return GuardrailDecision.block(reason)
        return GuardrailDecision()

    return _named(privacy_input, "privacy_input", incremental=True)


def sensitive_tool_confirmation_guardrail(
    tool_names: Iterable[str],
    *,
    approved: bool | Callable[[str, Mapping[str, Any], Any], bool] = False,
    reason: str = "This tool needs confirmation before it runs.",
) -> Callable[[Any, Any], GuardrailDecision]:
    """Deny calls of ``tool_names`` unless ``approved`` (a bool, or ``fn(tool, args, ctx) -> bool``)."""
    if isinstance(tool_names, str):
        tool_names = [tool_names]
    names = frozenset(tool_names)
    if not names:
        raise ConfigurationError(
            "LA-CONFIG", "sensitive_tool_confirmation_guardrail needs tool names"
        )

    def sensitive_tool_confirmation(value: Any, ctx: Any = None) -> GuardrailDecision:
        name = (value or {}).get("tool_name")
        if name not in names:
            return GuardrailDecision()
        ok = (
            approved(name, (value or {}).get("arguments") or {}, ctx)
            if callable(approved)
            else approved
        )
        return GuardrailDecision() if ok else GuardrailDecision.block(f"{name}: {reason}")

    return _named(sensitive_tool_confirmation, "sensitive_tool_confirmation")


def high_risk_parameter_guardrail(
    rules: Mapping[str, Callable[[Any], bool] | Iterable[Any]],
    *,
    reason: str = "A parameter value is outside the allowed range.",
    tools: Iterable[str] | None = None,
) -> Callable[[Any, Any], GuardrailDecision]:
    """Deny a tool call whose parameter fails its rule: ``{param: predicate or allowed values}``."""
    if not isinstance(rules, Mapping) or not rules:
        raise ConfigurationError("LA-CONFIG", "high_risk_parameter_guardrail needs {param: rule}")
    checks: dict[str, Callable[[Any], bool]] = {}
    for param, rule in rules.items():
        if callable(rule):
            checks[param] = rule
        else:
            checks[param] = list(rule).__contains__
    only = frozenset(tools) if tools is not None else None

    def high_risk_parameter(value: Any, ctx: Any = None) -> GuardrailDecision:
        if only is not None and (value or {}).get("tool_name") not in only:
            return GuardrailDecision()
        arguments = (value or {}).get("arguments") or {}
        for param, check in checks.items():
            if param not in arguments:
                continue
            try:
                ok = bool(check(arguments[param]))
            except Exception:
                ok = False  # a rule that cannot judge the value does not let it through
            if not ok:
                return GuardrailDecision.block(f"{param}: {reason}")
        return GuardrailDecision()

    return _named(high_risk_parameter, "high_risk_parameter")


def output_redaction_guardrail(
    patterns: Iterable[str | re.Pattern[str]] | None = None,
    *,
    replacement: str = "[redacted]",
) -> Callable[[Any, Any], GuardrailDecision]:
    """Replace every match of ``patterns`` in the output with ``replacement``."""
    compiled = _compile(patterns)

    def output_redaction(value: Any, ctx: Any = None) -> GuardrailDecision:
        if not isinstance(value, str):
            return GuardrailDecision()
        text = value
        for pattern in compiled:
            text = pattern.sub(replacement, text)
        return GuardrailDecision() if text == value else GuardrailDecision.allow(text, "redacted")

    return _named(output_redaction, "output_redaction", incremental=True)
