"""Typed errors with stable ``LA-…`` codes, a one-line hint and structured details."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from lightagent.error_codes import CODES, Row, plugin_codes

if TYPE_CHECKING:  # the view types dict's methods return
    from _collections_abc import dict_items, dict_keys, dict_values

__all__ = [
    "ERROR_TAXONOMY",
    "ApprovalError",
    "BudgetError",
    "CancelledError",
    "ConfigurationError",
    "ErrorInfo",
    "ErrorTaxonomy",
    "LightAgentError",
    "LightAgentErrorInfo",
    "MissingExtraError",
    "ModelError",
    "PluginError",
    "PolicyError",
    "StorageError",
    "ToolError",
    "ValidationError",
    "classify_exception",
    "format_error_code",
    "format_lightagent_error",
]


@dataclass(frozen=True)
class ErrorInfo:
    """What a code means and the one-line hint shown with it."""

    code: str
    family: str
    message: str
    hint: str


@dataclass(frozen=True)
class LightAgentErrorInfo:
    """The seeds' record of one code: ``code``, ``message`` and ``guidance`` (our ``hint``)."""

    code: str
    message: str
    guidance: str

    @property
    def hint(self) -> str:
        """This project's name for :attr:`guidance`."""
        return self.guidance

    @classmethod
    def of(cls, code: str) -> LightAgentErrorInfo:
        """The record for ``code`` (``LA-UNKNOWN``'s for a code outside the taxonomy)."""
        info = ERROR_TAXONOMY.get(code) or ERROR_TAXONOMY["LA-UNKNOWN"]
        return cls(info.code, info.message, info.hint)


_T = TypeVar("_T")


class ErrorTaxonomy(dict[str, ErrorInfo]):
    """Code -> :class:`ErrorInfo`: the kernel's codes, and the installed plugins' on first need.

    Looking up a code the kernel lacks, or walking the whole table, first adds the codes
    the installed distributions register (:func:`lightagent.error_codes.plugin_codes`),
    once; a kernel code is found without reading any plugin.
    """

    def __init__(self, rows: Iterable[Row]) -> None:
        super().__init__((row[0], ErrorInfo(*row)) for row in rows)
        self._complete = False
        self._loading = False
        self._lock = threading.RLock()

    def add_plugin_codes(self) -> None:
        """Add the plugins' codes now (later calls do nothing); a kernel code keeps its row."""
        if self._complete:
            return
        with self._lock:
            # _loading: a lookup made while the plugins' tables load (same thread) sees
            # the codes known so far instead of loading again.
            if self._complete or self._loading:
                return
            self._loading = True
            try:
                for row in plugin_codes():
                    self.setdefault(row[0], ErrorInfo(*row))
                self._complete = True
            finally:
                self._loading = False

    def __missing__(self, code: str) -> ErrorInfo:
        self.add_plugin_codes()
        if dict.__contains__(self, code):
            return dict.__getitem__(self, code)
        raise KeyError(code)

    def __contains__(self, code: object) -> bool:
        if dict.__contains__(self, code):
            return True
        self.add_plugin_codes()
        return dict.__contains__(self, code)

    @overload
    def get(self, code: str, default: None = None, /) -> ErrorInfo | None: ...
    @overload
    def get(self, code: str, default: ErrorInfo | _T, /) -> ErrorInfo | _T: ...
    def get(self, code: str, default: Any = None, /) -> Any:
        """The code's :class:`ErrorInfo` (a plugin's too), or ``default``."""
        if not dict.__contains__(self, code):
            self.add_plugin_codes()
        return dict.get(self, code, default)

    def __iter__(self) -> Iterator[str]:
        self.add_plugin_codes()
        return super().__iter__()

    def __len__(self) -> int:
        self.add_plugin_codes()
        return super().__len__()

    def keys(self) -> dict_keys[str, ErrorInfo]:
        """Every code, the plugins' included."""
        self.add_plugin_codes()
        return super().keys()

    def values(self) -> dict_values[str, ErrorInfo]:
        """Every code's :class:`ErrorInfo`, the plugins' included."""
        self.add_plugin_codes()
        return super().values()

    def items(self) -> dict_items[str, ErrorInfo]:
        """Every (code, :class:`ErrorInfo`), the plugins' included."""
        self.add_plugin_codes()
        return super().items()


# The kernel's codes live in lightagent/error_codes.py: add rows there, never rename or
# reuse one. A plugin's codes come from its ``lightagent.error_codes`` entry point.
ERROR_TAXONOMY: ErrorTaxonomy = ErrorTaxonomy(CODES)


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
        details: dict[str, Any] | str | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        if code is not None and not code.startswith("LA-") and message is None:
            code, message = None, code
        code = code or self.default_code
        info = ERROR_TAXONOMY.get(code)
        original = None
        if info is None:
            # The seeds map a code outside the taxonomy to LA-UNKNOWN; the text is kept, and
            # the code given in details["original_code"] so nothing is lost.
            original, code, info = code, "LA-UNKNOWN", ERROR_TAXONOMY["LA-UNKNOWN"]
        self.code: str = code
        self.message: str = message or (original if original else info.message)
        self.hint: str = hint or guidance or info.hint
        self.details: dict[str, Any] = _details(details)
        if original is not None and original.startswith("LA-"):
            self.details.setdefault("original_code", original)
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


def _details(details: Any) -> dict[str, Any]:
    # Details are always a dict here (results and events read keys from them); the seeds
    # also accepted a string, which is kept under "text".
    if details is None:
        return {}
    if isinstance(details, dict):
        return dict(details)
    if isinstance(details, str):
        return {"text": details}
    return {"value": details}


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


def format_error_code(code: str, details: Any = None) -> str:
    """The seeds' error string: ``"[LA-XXX] message Guidance: … Details: …"``.

    A code outside the taxonomy is shown as ``LA-UNKNOWN`` with the given code in the details.
    """
    info = ERROR_TAXONOMY.get(code)
    if info is None:
        extra = f"code={code}"
        details = f"{extra}; {details}" if details else extra
        info = ERROR_TAXONOMY["LA-UNKNOWN"]
    text = f"[{info.code}] {info.message}"
    if info.hint:
        text += f" Guidance: {info.hint}"
    if details:
        text += f" Details: {details}"
    return text


def format_lightagent_error(
    exc: BaseException, action: str | None = None, default_code: str = "LA-UNKNOWN"
) -> str:
    """``exc`` as the seeds' error string; ``action`` (what was being done) leads the message."""
    if isinstance(exc, LightAgentError):
        code, message, hint, details = exc.code, exc.message, exc.hint, exc.details
    else:
        code = classify_exception(exc, default_code)
        info = ERROR_TAXONOMY.get(code) or ERROR_TAXONOMY["LA-UNKNOWN"]
        code, hint, details = info.code, info.hint, {}
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if action:
        message = f"{action} failed: {message}"
    text = f"[{code}] {message}"
    if hint:
        text += f" Guidance: {hint}"
    if details:
        text += f" Details: {details.get('text', details) if len(details) == 1 else details}"
    return text
