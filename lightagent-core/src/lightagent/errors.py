"""Typed errors with stable ``LA-…`` codes, a one-line hint and structured details."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lightagent.error_codes import CODES

__all__ = [
    "ERROR_TAXONOMY",
    "ApprovalError",
    "BudgetError",
    "CancelledError",
    "ConfigurationError",
    "ErrorInfo",
    "LightAgentError",
    "MissingExtraError",
    "ModelError",
    "PluginError",
    "PolicyError",
    "StorageError",
    "ToolError",
    "ValidationError",
    "classify_exception",
]


@dataclass(frozen=True)
class ErrorInfo:
    """What a code means and the one-line hint shown with it."""

    code: str
    family: str
    message: str
    hint: str


# The codes live in lightagent/error_codes.py: add rows there, never rename or reuse one.
ERROR_TAXONOMY: dict[str, ErrorInfo] = {row[0]: ErrorInfo(*row) for row in CODES}


class LightAgentError(Exception):
    """Base of every lightagent error: a stable ``code``, a ``message``, a one-line ``hint`` and ``details``.

    ``LightAgentError("LA-TOOL", "boom")`` follows the seeds' signature; subclasses
    accept a bare message (``ToolError("boom")``) and use their family's default code.
    """

    default_code = "LA-UNKNOWN"
    family = "unknown"

    def __init__(
        self,
        code: str | None = None,
        message: str | None = None,
        guidance: str | None = None,
        details: dict[str, Any] | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        if code is not None and not code.startswith("LA-") and message is None:
            code, message = None, code
        code = code or self.default_code
        info = ERROR_TAXONOMY.get(code)
        if info is None and not code.startswith("LA-"):
            code, info = "LA-UNKNOWN", ERROR_TAXONOMY["LA-UNKNOWN"]
        self.code: str = code
        self.message: str = message or (info.message if info else code)
        self.hint: str = hint or guidance or (info.hint if info else "")
        self.details: dict[str, Any] = dict(details or {})
        super().__init__(self.message)

    @property
    def guidance(self) -> str:
        """The seeds' name for :attr:`hint`."""
        return self.hint

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        return f"{text} Hint: {self.hint}" if self.hint else text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form for results, traces and events."""
        return {
            "code": self.code,
            "type": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "details": self.details,
        }


class ModelError(LightAgentError):
    """The model endpoint failed, refused, or produced output that cannot be used."""

    default_code = "LA-PROVIDER"
    family = "model"

    @property
    def status_code(self) -> int | None:
        """The HTTP status of the endpoint, when there was one."""
        value = self.details.get("status_code")
        return int(value) if value is not None else None


class ToolError(LightAgentError):
    """A tool is missing, invalid, failed, or timed out."""

    default_code = "LA-TOOL"
    family = "tool"


class ValidationError(LightAgentError):
    """An argument, schema or configuration value is invalid."""

    default_code = "LA-VALIDATION"
    family = "validation"


class ConfigurationError(ValidationError):
    """A constructor or call argument is invalid."""

    default_code = "LA-CONFIG"


class PolicyError(LightAgentError):
    """A guardrail, hook, policy or gate denied an operation."""

    default_code = "LA-POLICY"
    family = "policy"


class ApprovalError(PolicyError):
    """An operation needs approval, or the approval given does not fit it."""

    default_code = "LA-APPROVAL"


class BudgetError(LightAgentError):
    """A budget, an iteration limit or a deadline was exhausted."""

    default_code = "LA-BUDGET"
    family = "budget"


class CancelledError(BudgetError):
    """The run was cancelled through its :class:`CancellationToken`."""

    default_code = "LA-CANCELLED"


class StorageError(LightAgentError):
    """A store failed, conflicted with another writer, or found corrupt data."""

    default_code = "LA-STORAGE"
    family = "storage"


class PluginError(LightAgentError):
    """A plugin failed to load, conflicts with another, or is missing."""

    default_code = "LA-PLUGIN"
    family = "plugin"


class MissingExtraError(ConfigurationError, ImportError):
    """An optional distribution or dependency is not installed (``LA-MISSING-EXTRA``).

    A :class:`ConfigurationError` (what the install lacks is configuration), and an
    ``ImportError``, so ``from lightagent import Name`` fails the usual way; the message
    and ``details["install"]`` name the ``pip install`` line.
    """

    default_code = "LA-MISSING-EXTRA"
    family = "plugin"


_STATUS_CODES = {400, 401, 403, 404, 408, 413, 429, 500, 503}


def classify_exception(exc: BaseException, default_code: str = "LA-UNKNOWN") -> str:
    """The ``LA-…`` code that best describes ``exc`` (HTTP status first, then its type)."""
    if isinstance(exc, LightAgentError):
        return exc.code
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        if status in _STATUS_CODES:
            return f"LA-{status}"
        if status == 502:
            return "LA-500"
        if status == 504:
            return "LA-503"
    if isinstance(exc, TimeoutError):
        return "LA-408"
    name = type(exc).__name__.lower()
    if "timeout" in name:
        return "LA-408"
    if "json" in name:
        return "LA-JSON"
    return default_code
